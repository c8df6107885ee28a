"""Stopping `deepresearch serve-model`: SIGINT, SIGTERM and SIGHUP stop vLLM and every process it started,
free the port, print one line and exit 0; a serve-model killed outright (SIGKILL) leaves nothing running either.

No vLLM: the real CLI starts, through vllm_launch.py as always, a stand-in `vllm.entrypoints.openai.api_server`
from a throwaway venv. Like vLLM's API server it answers /health on --port and has a child of its own (the
engine core). The CLI starts with SIGINT ignored, as a background job of a non-interactive shell (`cmd &`) does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from ..app.helpers import clean_env

STAND_IN_API_SERVER = """\
import http.server, os, subprocess, sys

ENGINE = "import signal, time; "
if os.environ.get("STAND_IN_ENGINE_HANGS"):  # an engine that does not stop on SIGTERM
    ENGINE += "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
ENGINE += "time.sleep(600)"

port = int(sys.argv[sys.argv.index("--port") + 1])
engine = subprocess.Popen([sys.executable, "-c", ENGINE])  # vLLM's engine core
with open(os.environ["STAND_IN_PIDS"], "w") as pids:
    pids.write(f"{os.getpid()} {engine.pid}")


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


@pytest.fixture(scope="module")
def stand_in_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv (this Python, no pip) whose site-packages holds the stand-in vLLM API server."""
    root = tmp_path_factory.mktemp("stand-in-vllm") / "venv"
    venv.create(root, with_pip=False, symlinks=True)
    [site_packages] = root.glob("lib/python3*/site-packages")
    package = site_packages / "vllm" / "entrypoints" / "openai"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "api_server.py").write_text(STAND_IN_API_SERVER)
    return root


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _processes() -> list[tuple[int, int, str]]:
    """(pid, process group, command line) of every live process (zombies are dead: only a reaper is missing)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, _ppid, group = stat.rsplit(")", 1)[1].split()[:3]
        if state != "Z":
            found.append((int(proc.name), int(group), cmdline))
    return found


def _left_over(group: int, pids: list[int]) -> list[str]:
    """What is still running of the server's group, of `pids`, or of its watchdog."""
    return [f"{pid}: {cmdline}" for pid, pgid, cmdline in _processes()
            if pgid == group or pid in pids or ("group_watchdog.py" in cmdline and f" {group} " in f"{cmdline} ")]


def _wait_until(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _start_serve_model(tmp_path: Path, stand_in_venv: Path, **env_extra: str
                       ) -> tuple[subprocess.Popen[str], int, list[int]]:
    """serve-model on the stand-in, once it has printed its URL (healthy): the child, the port, the server's
    and its engine's pids (the server leads the group)."""
    port, pids_file = _free_port(), tmp_path / "pids"
    env = clean_env(tmp_path, DEEPRESEARCH_MODEL__NAME="stand-in/model", STAND_IN_PIDS=str(pids_file), **env_extra)
    out_path = tmp_path / "out"
    with open(out_path, "w") as out, open(tmp_path / "err", "w") as err_file:
        child = subprocess.Popen(
            [sys.executable, "-m", "deepresearch", "serve-model", "--venv", str(stand_in_venv), "--port", str(port)],
            env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err_file, text=True, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `cmd &` in a script starts it
        )
    try:
        _wait_until(lambda: f"127.0.0.1:{port}/v1" in out_path.read_text() or child.poll() is not None, 120,
                    "serve-model never became healthy")
        assert child.poll() is None, (tmp_path / "err").read_text()[-3000:]
        pids = [int(pid) for pid in pids_file.read_text().split()]
    except BaseException:
        child.kill()
        child.wait(10)
        raise
    return child, port, pids


def _clean_up(child: subprocess.Popen[str], group: int) -> None:
    """Whatever a failing test leaves: serve-model, the server's group, the watchdog."""
    if child.poll() is None:
        child.kill()
        child.wait(10)
    for pid, pgid, cmdline in _processes():
        if pgid == group or ("group_watchdog.py" in cmdline and f" {group} " in f"{cmdline} "):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_stops_the_server_and_everything_it_started(tmp_path, stand_in_venv, stop_signal):
    child, port, pids = _start_serve_model(tmp_path, stand_in_venv)
    group = pids[0]
    try:
        assert _port_answers(port) and len(_left_over(group, pids)) >= 2  # the server and its engine
        child.send_signal(stop_signal)
        child.wait(timeout=60)
        # The watchdog exits within half a second of the group; nothing else may be left at all.
        _wait_until(lambda: not _left_over(group, pids), 5, f"still running: {_left_over(group, pids)}")
        assert not _port_answers(port)
        stderr = (tmp_path / "err").read_text()
        assert child.returncode == 0, stderr[-3000:]
        assert "Traceback" not in stderr, stderr[-3000:]
        assert stderr.strip().splitlines()[-1] == "stopping vLLM…"
    finally:
        _clean_up(child, group)


def test_a_killed_serve_model_leaves_no_server_running(tmp_path, stand_in_venv):
    child, port, pids = _start_serve_model(tmp_path, stand_in_venv)
    group = pids[0]
    try:
        child.kill()  # SIGKILL: serve-model's own stop never runs
        child.wait(timeout=10)
        _wait_until(lambda: not _left_over(group, pids), 15, f"still running: {_left_over(group, pids)}")
        assert not _port_answers(port)
    finally:
        _clean_up(child, group)


def test_a_second_ctrl_c_does_not_wait_for_a_hanging_engine(tmp_path, stand_in_venv):
    child, port, pids = _start_serve_model(tmp_path, stand_in_venv, STAND_IN_ENGINE_HANGS="1")
    group = pids[0]
    try:
        child.send_signal(signal.SIGINT)
        _wait_until(lambda: "stopping vLLM" in (tmp_path / "err").read_text(), 10, "no stopping line")
        time.sleep(0.5)
        assert child.poll() is None  # waiting out the engine's grace (20 s)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        child.wait(timeout=15)
        assert time.monotonic() - started < 10
        _wait_until(lambda: not _left_over(group, pids), 5, f"still running: {_left_over(group, pids)}")
        assert child.returncode == 0 and "Traceback" not in (tmp_path / "err").read_text()
    finally:
        _clean_up(child, group)
