"""`ask --approve` without a terminal reads the decision from stdin (or rejects when there is none), and the
review prints the plan literally: the real CLI against the loopback model server, and the prompt logic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.plan_prompt import review_plan

from .fake_openai import fake_openai_server
from .helpers import clean_env

QUESTION = "Who designed the Analytical Engine?"


def _ask_approve(tmp: Path, stdin: str | None) -> subprocess.CompletedProcess[str]:
    with fake_openai_server() as server:
        env = clean_env(tmp, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=server.base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
        return subprocess.run([sys.executable, "-m", "deepresearch", "ask", "--offline", "--approve", QUESTION],
                              input=stdin, stdin=subprocess.DEVNULL if stdin is None else None,
                              capture_output=True, text=True, env=env, timeout=300)


def _run(tmp: Path) -> tuple[str, list[dict[str, Any]]]:
    store = TraceStore(tmp / "data" / "traces.db")
    try:
        [run] = store.list_runs()
        return run.status, [e.payload["decision"] for e in store.events(run.id, "plan_decision")]
    finally:
        store.close()


def test_piped_r_rejects_the_plan_and_the_plan_is_printed_literally(tmp_path: Path):
    proc = _ask_approve(tmp_path, "r\n")
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert _run(tmp_path) == ("rejected", [{"action": "reject"}])
    assert f"  1. [search] {QUESTION}" in proc.stderr  # the tool label is not eaten as markup
    assert "Accept, edit or reject this plan? a/e/r (empty line: accept): r" in proc.stderr


def test_no_input_rejects_in_one_line(tmp_path: Path):
    proc = _ask_approve(tmp_path, None)
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "no answer (the input ended): plan rejected" in proc.stderr
    assert _run(tmp_path)[0] == "rejected"


def test_piped_edit_keeps_a_step_on_an_empty_line_and_drops_one_on_a_dash(tmp_path: Path):
    proc = _ask_approve(tmp_path, "e\n\n-\nBabbage engine design\n")
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    status, [decision] = _run(tmp_path)
    assert decision["action"] == "edit", decision
    assert [s["query"] for s in decision["steps"]] == [QUESTION, "Babbage engine design"]


PLAN = [{"id": 1, "goal": "find [it]", "tool": "search", "query": "q [one]"},
        {"id": 2, "goal": "read", "tool": "open", "query": "local://demo/1"}]


def _review(answers: list[str | None]) -> tuple[dict[str, Any], list[str]]:
    said: list[str] = []
    pending = list(answers)

    def read(prompt: str) -> str | None:
        said.append(prompt)
        return pending.pop(0) if pending else None

    return review_plan(PLAN, read, said.append), said


@pytest.mark.parametrize(("answers", "action"), [([""], "accept"), (["A"], "accept"), (["r"], "reject"),
                                                 (["x", "a"], "accept"), ([None], "reject"), (["x"], "reject")])
def test_decisions(answers: list[str | None], action: str):
    assert _review(answers)[0]["action"] == action


def test_an_edit_that_drops_every_step_rejects():
    decision, said = _review(["e", "-", "-", ""])
    assert decision == {"action": "reject"} and said[-1] == "every step was dropped: plan rejected"


def test_an_edit_replaces_keeps_and_adds():
    decision, said = _review(["e", "q two", "", "extra"])
    assert [s["query"] for s in decision["steps"]] == ["q two", "local://demo/1", "extra"]
    assert "  1. [search] q [one]  — find [it]" in said
