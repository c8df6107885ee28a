"""Memory does not spread mistakes: a wrong run's findings are not recalled into an unrelated question's plan, no
plan step searches or opens a recalled sentence, and a run rated -1 takes back what it remembered."""

from __future__ import annotations

from pathlib import Path

from deepresearch.agent.graph.nodes.planner import about_the_question, copied_from_notes
from deepresearch.tools.memory.store import Memory
from deepresearch.tools.memory.tool import RecallInput, RecallOutput, RecallTool

from .conftest import default_script, plan_of, run, user_text
from .fakes import ScriptedModel

# What the README's second example left in memory before: findings of a wrong run about the Analytical Engine.
WRONG_RUN_NOTES = [
    "U.S.A — \"Elsewhere, notably in the U.S.A., more advanced designs with electric transmission were built "
    "experimentally.\" (question: Who designed the Analytical Engine?)",
    "A limited number of steam turbine railroad locomotives were manufactured. (question: Who designed the "
    "Analytical Engine?)",
    "The KU School of Engineering is an ABET accredited, public engineering school located on the main campus.",
]
CITY_HEIRESS = "In what year did the playwright who wrote The City Heiress die?"


def test_notes_about_something_else_are_not_recalled():
    assert about_the_question(CITY_HEIRESS, WRONG_RUN_NOTES) == []
    relevant = "The City Heiress is a play by Aphra Behn produced in 1682."
    assert about_the_question(CITY_HEIRESS, [*WRONG_RUN_NOTES, relevant]) == [relevant]


def test_a_query_or_url_copied_from_a_note_is_recognised():
    notes = WRONG_RUN_NOTES
    assert copied_from_notes("A limited number of steam turbine railroad locomotives were", CITY_HEIRESS, notes)
    assert copied_from_notes("steam turbine railroad locomotives", CITY_HEIRESS, notes)
    assert copied_from_notes("KU School of Engineering ABET accredited", CITY_HEIRESS, notes)
    assert not copied_from_notes("The City Heiress playwright", CITY_HEIRESS, notes)
    assert not copied_from_notes("Aphra Behn death", CITY_HEIRESS, notes)


async def test_the_plan_neither_sees_nor_copies_an_unrelated_note(toolbox, store):
    class WrongRunRecall(RecallTool):  # the recall tool as the agent uses it, over a wrong run's findings
        def __init__(self) -> None:
            pass

        async def run(self, args: RecallInput) -> RecallOutput:
            return RecallOutput(query=args.query, memories=[
                Memory(id=f"m{i}", text=t, source="local://x/d3", created_at=0.0) for i, t in
                enumerate(WRONG_RUN_NOTES)], documents=[])

    toolbox.tools["recall"] = WrongRunRecall()
    # A planner that copies what it is shown, as the 135M model did.
    script = default_script()
    model = ScriptedModel(lambda role, req: plan_of("steam turbine railroad locomotives", "Ada Lovelace born")
                          if role == "planner" else script(role, req))
    result = await run(model, toolbox, store, question="When was Ada Lovelace born?")
    planner = [req for role, req in model.requests if role == "planner"][0]
    assert "locomotives" not in user_text(planner) and "KU School" not in user_text(planner)
    searched = [raw["query"] for name, raw in toolbox.invocations if name == "search"]
    assert "steam turbine railroad locomotives" not in searched and "Ada Lovelace born" in searched
    assert result.answer == "1815"


def test_a_run_rated_wrong_forgets_what_it_remembered(tmp_path: Path):
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.app.feedback import record_feedback
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.embedding import Embedder
    from deepresearch.tools.memory.store import MemoryStore

    tools = ToolSettings(data_dir=tmp_path)
    memory = MemoryStore(tools.memory_dir, Embedder(), tools.memory.collection)
    memory.remember("Ada Lovelace was born in 1815.", "local://x/d1", run_id="good")
    memory.remember("U.S.A designed the Analytical Engine.", "local://x/d2", run_id="wrong")
    store = TraceStore(tmp_path / "traces.db")
    for run_id in ("good", "wrong"):
        store.start_run("q?", {}, run_id=run_id)
    assert record_feedback(store, tools, "good", 1.0) == 0
    assert record_feedback(store, tools, "wrong", -1.0, "the answer is wrong") == 1
    assert [m.text for m in memory.entries()] == ["Ada Lovelace was born in 1815."]
    store.close()
