"""`ask --approve`: the proposed plan reviewed line by line, on the terminal or, without one, from stdin.

Everything is printed literally (a query may hold brackets: nothing is read as Rich markup), and each
prompt says what an empty line does. Piped input answers the same prompts one line each
(`printf 'e\\n-\\n\\nnew query\\n' | deepresearch ask --approve …`); when the input ends before a decision
the plan is rejected: nothing runs that nobody approved.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console

DECISIONS = {"a": "accept", "e": "edit", "r": "reject"}
# Reads one answer after showing its prompt; None when the input has ended.
ReadLine = Callable[[str], "str | None"]


def plan_lines(plan: list[dict[str, Any]]) -> list[str]:
    return [f"  {i}. [{s['tool']}] {s['query']}  — {s['goal']}" for i, s in enumerate(plan, 1)]


def review_plan(plan: list[dict[str, Any]], read: ReadLine, say: Callable[[str], None]) -> dict[str, Any]:
    """The decision the graph resumes with: accept, reject, or edit with the steps kept, changed or added."""
    say("Proposed plan:")
    for line in plan_lines(plan):
        say(line)
    while True:
        answer = read("Accept, edit or reject this plan? a/e/r (empty line: accept): ")
        if answer is None:
            say("no answer (the input ended): plan rejected")
            return {"action": "reject"}
        choice = answer.strip().lower()[:1] or "a"
        if choice in DECISIONS:
            break
        say(f"'{answer.strip()}' is not a, e or r")
    if choice != "e":
        return {"action": DECISIONS[choice]}
    steps = []
    for i, step in enumerate(plan, 1):
        answer = read(f"step {i} [{step['tool']}] {step['query']}\n  new query (empty line: keep it, '-': drop it): ")
        if answer is None:
            say("no answer (the input ended): plan rejected")
            return {"action": "reject"}
        query = answer.strip()
        if query == "-":
            continue
        steps.append({**step, "query": query} if query else dict(step))
    extra = (read("add a search query (empty line: none): ") or "").strip()
    if extra:
        steps.append({"goal": extra, "tool": "search", "query": extra})
    if not steps:
        say("every step was dropped: plan rejected")
        return {"action": "reject"}
    return {"action": "edit", "steps": steps}


def stdin_reader(console: Console) -> ReadLine:
    """Prompts on `console` (stderr), answers from stdin, whether a terminal or a pipe. Ctrl-C interrupts the
    wait at once: asyncio's own SIGINT handler only cancels the run's task, which a blocking read never sees."""

    def read(prompt: str) -> str | None:
        console.print(prompt, end="", markup=False, highlight=False, soft_wrap=True)
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
        try:
            line = input()  # on a terminal with line editing
        except EOFError:
            line = None
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        if not sys.stdin.isatty():
            console.print("" if line is None else line, markup=False, highlight=False)  # piped answers, as read
        return line


    return read
