"""The graph you read is the graph that runs: docs/architecture.md's picture is drawn from the compiled
graph, and the coordinator's routing is a pure function of the state, tested here rule by rule. The
imports run one way: the reader (agent/reader) is pure standard library and knows nothing of the graph,
the rest of the code asks it through its face only, and no module of either imports itself back."""

from __future__ import annotations

import ast
import re
import sys
import time
from pathlib import Path

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.graph.builder import mermaid
from deepresearch.agent.graph.nodes.coordinator import Stop, decide, stale_after_round

ROOT = Path(__file__).resolve().parents[2]
READER = "deepresearch.agent.reader"


def module_name(path: Path) -> str:
    """The installed name of a repo file: agent/reader/text.py → deepresearch.agent.reader.document.text."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(("deepresearch", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (function-level and TYPE_CHECKING imports too), as absolute
    names; `from package import name` also names package.name (a submodule, when there is one)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package if node.level else ""
            base = ".".join(p for p in (base, node.module) if p)
            out |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return out


def modules_under(*folders: str) -> dict[str, Path]:
    return {module_name(p): p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))}


def test_the_reader_imports_nothing_but_itself_and_the_standard_library():
    for name, path in modules_under("agent/reader").items():
        for imported in imports_of(path):
            top = imported.partition(".")[0]
            assert imported.startswith(READER) or top in sys.stdlib_module_names or top == "__future__", (
                f"{name} imports {imported}: the reader's rules are pure standard library")


def test_outside_the_reader_its_face_is_all_that_is_imported():
    inside = set(modules_under("agent/reader"))
    for name, path in modules_under("agent", "app", "train", "evals").items():
        if name.startswith(READER):
            continue
        reached = {m for m in imports_of(path) if m in inside and m != READER}
        assert not reached, f"{name} imports {sorted(reached)}: import the reader's face ({READER}) instead"


def test_no_import_circle_in_the_graph_or_the_reader():
    modules = modules_under("agent/graph", "agent/reader")
    edges = {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join((*path[path.index(name):], name)))
        if name not in done:
            for nxt in sorted(edges[name]):
                visit(nxt, (*path, name))
            done.add(name)

    for name in sorted(modules):
        visit(name, ())


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
