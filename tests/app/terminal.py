"""A command run on a pseudo-terminal, as a person runs it: what it draws is read back, keys are typed
(Ctrl-C included: the terminal sends SIGINT to every process of the command), and its exit status is kept."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Callable

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\x1b\][^\x07]*\x07")


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], *, columns: int = 120, rows: int = 40):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child, on the new terminal
            os.environ.clear()
            os.environ.update({**env, "COLUMNS": str(columns), "LINES": str(rows)})
            os.execvp(argv[0], argv)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.screen = bytearray()
        self.status: int | None = None

    @property
    def text(self) -> str:
        """Everything drawn so far, without the terminal's control sequences."""
        return _ESCAPES.sub("", self.screen.decode(errors="replace"))

    def read(self, seconds: float) -> bool:
        """Collect output for up to `seconds`; False once the terminal closed (every process on it ended)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                self.screen.extend(chunk)
        return True

    def wait_for(self, condition: Callable[[], bool], timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"timed out; the screen:\n{self.text[-3000:]}"
            assert self.read(0.2) or condition(), f"the command ended; the screen:\n{self.text[-3000:]}"

    def type(self, keys: str | bytes) -> None:
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)

    def wait_exit(self, timeout_s: float = 60) -> int:
        """The exit status (like a shell's $?: 128 + N for a signal)."""
        deadline = time.monotonic() + timeout_s
        while self.status is None and time.monotonic() < deadline:
            self.read(0.2)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        self.read(0.5)
        assert self.status is not None, f"still running; the screen:\n{self.text[-3000:]}"
        return self.status if self.status >= 0 else 128 - self.status

    def close(self) -> None:
        """Kill whatever is left of the command (its whole session) and close the terminal."""
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)
