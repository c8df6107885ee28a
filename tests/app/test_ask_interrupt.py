"""Ctrl-C during `ask`: one line naming the run and how to resume it, the run left `interrupted`, exit 130.

The real CLI answers through a loopback model server that holds the first extractor request, so the run is
interrupted mid-step: once with SIGINT sent to the child, once with a real Ctrl-C typed on a terminal (a
pseudo-terminal) while `ask` writes into `| tee`, which the terminal interrupts as well.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepresearch.agent.trace.store import TraceStore

from .fake_openai import FakeOpenAIServer, fake_openai_server
from .helpers import cli, fake_model_env, is_extractor_request
from .terminal import Terminal

QUESTION = "Who designed the Analytical Engine?"


@pytest.fixture(autouse=True)
def sigint_not_ignored() -> Iterator[None]:
    """A suite started as a background job of a non-interactive shell (`cmd &`) has SIGINT ignored, and an ignored
    signal stays ignored across exec: `ask` would never see the Ctrl-C these tests send. A handler (unlike SIG_IGN)
    is reset to the default at exec, so the children start as a terminal's foreground job would."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)




def _wait_held(server: FakeOpenAIServer, alive: Any) -> None:
    deadline = time.monotonic() + 240
    while not server.held.wait(0.2):
        assert alive(), "the run ended before its first extractor call"
        assert time.monotonic() < deadline, "the run never reached an extractor call"


def _only_run(data: Path) -> tuple[str, str]:
    store = TraceStore(data / "traces.db")
    try:
        [run] = store.list_runs()
        return run.id, run.status
    finally:
        store.close()


def test_sigint_leaves_the_run_interrupted_and_names_it(tmp_path: Path):
    with fake_openai_server(hold=is_extractor_request) as server:
        child = subprocess.Popen([sys.executable, "-m", "deepresearch", "ask", "--offline", QUESTION],
                                 env=fake_model_env(tmp_path, server.base_url), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_held(server, lambda: child.poll() is None)
            child.send_signal(signal.SIGINT)
            _, stderr = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    assert child.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "InvalidStateError" not in stderr, stderr[-3000:]
    run_id, status = _only_run(tmp_path / "data")
    assert status == "interrupted"
    last = stderr.strip().splitlines()[-1]
    assert last == f"interrupted run {run_id} (interrupted); continue it with: deepresearch ask --resume {run_id}"

    with fake_openai_server() as server:
        resumed = cli("ask", "--resume", run_id, "--offline", "--quiet", "--json",
                      env=fake_model_env(tmp_path, server.base_url))
    assert resumed.returncode in (0, 3), resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["run_id"] == run_id
    assert _only_run(tmp_path / "data")[1] in ("finished", "budget_stop")


def test_ctrl_c_on_a_terminal_piped_into_tee(tmp_path: Path):
    with fake_openai_server(hold=is_extractor_request) as server:
        env = {**fake_model_env(tmp_path, server.base_url), "TERM": "xterm"}
        ask = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "deepresearch", "ask", "--offline", QUESTION))
        terminal = Terminal(["bash", "-c", f"{ask} | tee {shlex.quote(str(tmp_path / 'out.md'))}; "
                                           "echo ASK_EXIT=${PIPESTATUS[0]}"], env)
        try:
            terminal.wait_for(server.held.is_set, timeout_s=240)
            terminal.type(b"\x03")  # Ctrl-C: the terminal sends SIGINT to ask and tee alike
            terminal.wait_exit()
        finally:
            terminal.close()
    run_id, status = _only_run(tmp_path / "data")
    screen = terminal.text
    assert status == "interrupted", screen[-3000:]
    assert "ASK_EXIT=130" in screen, screen[-3000:]
    assert f"continue it with: deepresearch ask --resume {run_id}" in screen
    assert "Traceback" not in screen, screen[-3000:]
