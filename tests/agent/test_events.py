"""Typed run events: one `record` writes the trace and the progress stream; readers get the types back,
from new traces and from payloads written before the types existed."""

from __future__ import annotations

from deepresearch.agent.graph.events import (
    ActionStarted,
    AnswerScored,
    BridgeChosen,
    CitationsChecked,
    FindingMade,
    MalformedReply,
    PlanEdited,
    PlanMade,
    PlanReviewed,
    RepeatSkipped,
    Replanning,
    RunFailed,
    ScoredCandidate,
    StepFailed,
    StepsDispatched,
    Stopped,
    UsageReported,
    event_of,
    log_event,
    read_events,
)
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.graph.state import Finding, PlanStep

from .conftest import agent_settings, default_script
from .fakes import ScriptedModel

STEP = PlanStep(id=1, goal="g", tool="search", query="q", done_when="d", status="pending", round=-1)
FINDING = Finding(step_id=1, claim="c", quote="q.", source="local://t/d1", title="T", doc_id="d1", start=0, end=2)
TRACED = [
    PlanMade([STEP], replan=True), PlanEdited([STEP]), PlanReviewed({"action": "accept"}),
    BridgeChosen(search="Babbage", options=["Babbage", "London"]), Stopped("loop_stop", "no new evidence"),
    BridgeChosen(search="London", options=["Babbage", "London"], scores=[0.5, 0.75], read=["d1", "http://w/x"],
                 candidates=[ScoredCandidate("Babbage", features=1.0, likelihood=-0.5, quote="By Babbage."),
                             ScoredCandidate("London", features=0.5, likelihood=0.25, quote="In London.")]),
    Replanning(round=2), RepeatSkipped(step=3, repeated="search:x"), FindingMade(FINDING),
    StepFailed(step=2, error="boom"), MalformedReply(role="writer", step="writer", attempt=2, error="bad"),
    RunFailed("model gone"), AnswerScored(template="t@1", weight=1.0, candidates=[
        ScoredCandidate("a", features=1.5, likelihood=-2.0, quote="It was a.")]),
    AnswerScored(error="cannot score"),
    CitationsChecked(checked=1, verified=1, removed=0, citations=[], answer_options=["a", "not found"]),
]


def test_every_traced_event_reads_back_as_itself(store):
    run_id = store.start_run("q", {})
    for event in TRACED:
        log_event(store, run_id, event)
    back = [event_of(e.kind, e.payload) for e in store.events(run_id)]
    assert back == TRACED
    assert read_events(store, run_id, MalformedReply) == [TRACED[10]]
    assert [e.finding for e in read_events(store, run_id, FindingMade)] == [FINDING]


def test_payloads_written_before_the_types_still_read(store):
    run_id = store.start_run("q", {})
    store.log_event(run_id, "error", {"role": "planner", "step": "planner", "error": "x"})  # no attempt
    store.log_event(run_id, "finding", {"claim": "c", "quote": "q", "source": "http://w/doc/d7", "doc_id": "d7"})
    store.log_event(run_id, "citation_check", {"checked": 0})
    assert read_events(store, run_id, MalformedReply)[0].attempt == 1
    finding = read_events(store, run_id, FindingMade)[0].finding
    assert (finding["doc_id"], finding["title"], finding["step_id"]) == ("d7", "", -1)
    assert read_events(store, run_id, CitationsChecked)[0].answer_options is None
    assert event_of("llm", {}) is None


async def test_one_record_feeds_the_trace_and_the_progress_stream(toolbox, store):
    seen = []
    runtime = ResearchRuntime(ScriptedModel(default_script()), toolbox, store, agent_settings())
    result = await research("When was Ada Lovelace born?", runtime, options=RunOptions(on_event=seen.append))
    kinds = {type(e) for e in seen}
    assert {PlanMade, StepsDispatched, ActionStarted, FindingMade, UsageReported, CitationsChecked} <= kinds
    assert all(type(e).streamed for e in seen)
    # What was streamed and traced is the same event: the findings shown are the findings kept.
    shown = [e.finding for e in seen if isinstance(e, FindingMade)]
    assert shown and sorted(map(str, shown)) == sorted(str(e.finding) for e in read_events(store, result.run_id,
                                                                                           FindingMade))
    check = read_events(store, result.run_id, CitationsChecked)[0]
    assert next(e for e in seen if isinstance(e, CitationsChecked)) == check
