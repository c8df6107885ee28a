"""Start a `deepresearch` server command as a real child process, learn its URL from the line it prints,
and always stop it (terminate, then kill) when the test is done."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

URL = re.compile(r"http://[\w.\[\]:]+:\d+")


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)  # every line it printed so far, stdout and stderr


@contextmanager
def server_process(*args: str, env: dict[str, str], stream: str = "stdout", timeout: float = 60) -> Iterator[str]:
    """Run `deepresearch ARGS`; yield the base URL from the first line on `stream` that names one."""
    with served_process(*args, env=env, stream=stream, timeout=timeout) as served:
        yield served.url


@contextmanager
def served_process(*args: str, env: dict[str, str], stream: str = "stdout", timeout: float = 60) -> Iterator[Served]:
    """As `server_process`, with the process and its output (to signal it, or read what it printed)."""
    proc = subprocess.Popen([sys.executable, "-m", "deepresearch", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    seen: list[str] = []
    ready = threading.Event()

    def read(pipe: Any, watch: bool) -> None:
        for line in pipe:  # keep draining so the child never blocks on a full pipe
            seen.append(line)
            if watch and not found and (m := URL.search(line)):
                found.append(m.group(0))
                ready.set()
        ready.set()

    readers = [threading.Thread(target=read, args=(proc.stdout, stream == "stdout"), daemon=True),
               threading.Thread(target=read, args=(proc.stderr, stream == "stderr"), daemon=True)]
    for t in readers:
        t.start()
    try:
        ready.wait(timeout)
        assert found, f"no URL printed; exit {proc.poll()}; output:\n{''.join(seen)[-3000:]}"
        yield Served(found[0], proc, seen)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        for t in readers:
            t.join(5)


def sse_events(response: httpx.Response) -> Iterator[tuple[str, str, Any]]:
    """(id, event, data) of each Server-Sent Event of a streamed response, data parsed as JSON."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in fields:
                yield fields.get("id", ""), fields.get("event", "message"), json.loads(fields["data"])
            fields = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[key] = fields[key] + "\n" + value if key == "data" and key in fields else value
