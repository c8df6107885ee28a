"""A caller that gives up on an engine command (Ctrl-C cancels the run's awaits) leaves the embedded engine
working: the real SmolLM2-135M engine, its worker thread, a command cancelled while it waits its turn."""

from __future__ import annotations

import threading
from typing import Any


def test_a_command_cancelled_before_its_turn_does_not_kill_the_worker(embedded: Any):
    engine = embedded._engine
    crashed: list[BaseException] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: crashed.append(args.exc_value)
    try:
        gate = threading.Event()
        busy = engine.call(lambda: gate.wait(10))  # holds the worker while the next command waits
        waiting = engine.call(lambda: "never run")
        assert waiting.cancel()  # what asyncio.wrap_future does when its task is cancelled
        gate.set()
        assert busy.result(timeout=10)
        assert engine.call(lambda: "still working").result(timeout=10) == "still working"
    finally:
        threading.excepthook = hook
    assert crashed == []
