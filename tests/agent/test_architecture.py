"""The graph you read is the graph that runs: docs/architecture.md's picture is drawn from the compiled
graph, and the coordinator's routing is a pure function of the state, tested here rule by rule."""

from __future__ import annotations

import re
import time
from pathlib import Path

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.graph.builder import mermaid
from deepresearch.agent.graph.coordinator import Stop, decide, stale_after_round

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_picture_is_the_compiled_graph():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)```", doc, re.DOTALL)
    assert len(blocks) == 1, "docs/architecture.md holds one mermaid picture"
    assert blocks[0].strip() == mermaid(), (
        "the graph changed: paste the output of `python -m deepresearch.agent.graph.builder` into "
        "docs/architecture.md")


def test_the_picture_shows_every_route():
    drawn = set(re.findall(r"^\s*(\w+) -\.?-?> (\w+);", mermaid(), re.MULTILINE))
    assert {("coordinator", "executor"), ("coordinator", "follow_up"), ("coordinator", "planner"),
            ("coordinator", "writer"), ("follow_up", "coordinator"), ("follow_up", "writer"),
            ("executor", "coordinator")} <= drawn


def test_the_readme_layout_points_to_the_picture():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    assert "docs/architecture.md" in layout


def step(sid: int, status: str, rnd: int = -1) -> dict:
    return {"id": sid, "goal": "g", "tool": "search", "query": "q", "done_when": "d", "status": status, "round": rnd}


def finding(sid: int) -> dict:
    return {"step_id": sid, "claim": "c", "quote": "q", "source": "s", "title": "", "doc_id": None, "start": 0,
            "end": 1}


def state(**kw) -> dict:
    return {"question": "q?", "started_at": time.time(), "round": 0, **kw}


BUDGET = BudgetSettings(max_rounds=2, loop_window=2)


def test_routing_rules():
    assert decide(state(plan=[step(1, "pending")]), BUDGET, 0) == "executor"
    done = [step(1, "done", 1)]
    assert decide(state(round=1, plan=done, findings=[finding(1)]), BUDGET, 0) == "follow_up"
    assert decide(state(round=2, plan=done, findings=[finding(1)]), BUDGET, 0) == "writer"  # no rounds left
    assert decide(state(round=1, plan=done, findings=[finding(1)]), BUDGET, 1) == "writer"  # last round: nothing new
    assert decide(state(round=1, plan=[step(1, "failed", 1)]), BUDGET, 1) == "planner"
    assert decide(state(round=2, plan=[step(1, "failed", 2)]), BUDGET, 1) == Stop(
        "budget_stop", "no evidence found within 2 round(s)")
    assert decide(state(round=2, plan=[step(2, "pending")]), BUDGET, 0) == Stop(
        "budget_stop", "round budget reached (2 of 2)")
    assert decide(state(round=2, plan=done), BUDGET, 2) == Stop("loop_stop", "no new evidence in 2 round(s) in a row")
    spent = state(plan=[step(1, "pending")], usage={"llm_tokens": 10**6, "llm_calls": 1, "tool_calls": 0})
    assert isinstance(decide(spent, BUDGET, 0), Stop)


def test_closing_a_round_counts_rounds_without_new_evidence():
    assert stale_after_round(state(plan=[step(1, "pending")])) is None  # nothing ran yet
    ran = [step(1, "done", 1), step(2, "done", 2)]
    assert stale_after_round(state(round=2, plan=ran, findings=[finding(2)], stale_rounds=1)) == 0
    assert stale_after_round(state(round=2, plan=ran, findings=[finding(1)], stale_rounds=1)) == 2
    assert stale_after_round(state(round=2, plan=[*ran, step(3, "pending")], stale_rounds=1)) is None
