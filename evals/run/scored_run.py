"""One run-and-score path: a question through the graph with a RunPolicy, and what it scored.

    scored = await run_scored(question.question, runtime, policy, RunOptions(tags=...),
                              gold=question, doc_id_for=env.doc_id_for,
                              reward=lambda facts: score_run(facts, question, cfg.rewards))
    scored.run_id, scored.error, scored.facts.tool_calls, scored.em, scored.f1, scored.gold_evidence, scored.reward

Every caller that runs the graph and then judges the run goes through here: the eval's graph system,
the trainer's rollouts (which score later, per group, from the same `facts_from_trace`), the publish
gate (through the eval runner) and the learning demo. So "what the run did" (`RunFacts`: answer,
citations and findings with their document ids, tool calls as the run's usage counts them, roles
that failed) is read one way, and a document id missing from a citation or finding is always filled
from its URL. The findings are also read per hop: those before the run's first follow-up search, and
those of each follow-up hop (`RunFacts.hops`), which the trainer credits one by one.

It lives in evals (train imports evals, not the other way round); the reward is the trainer's, so it
comes in as a function of the facts instead of being imported from train.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from deepresearch.agent.graph.events import BridgeChosen, FindingMade, MalformedReply, event_of, read_events
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.evals.scoring.metrics import exact_match, f1, is_yes_no
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from deepresearch.agent.graph.run import ResearchResult, ResearchRuntime, RunOptions
    from deepresearch.agent.trace.records import RunRecord
    from deepresearch.agent.trace.store import TraceStore

DocIdFor = Callable[[str], str | None]  # a source URL → its corpus document id (local web), if any
R = TypeVar("R")


class Gold(Protocol):
    """What scoring against gold needs; EvalQuestion and the trainer's TrainQuestion both have it."""

    @property
    def golds(self) -> list[str]: ...  # the gold answer first, then its aliases (empty: no gold answer)

    gold_doc_ids: list[str]
    yes_no: bool


class HopFacts(BaseModel):
    """One follow-up hop of a run: the names its decision searched (`BridgeChosen.search`; with
    agent.bridge_hops > 1 only the first name is logged) and the documents the findings made after it
    came from, up to the next hop. `bridge`: the names came from the evidence read (follow_up.bridge_steps,
    whose decision logs the names' sentences); else they are the question's own options or parts
    (follow_up.option_steps), or the trace is older than those sentences."""

    searches: list[str]
    bridge: bool
    doc_ids: list[str] = Field(default_factory=list)


class RunFacts(BaseModel):
    """What a reward looks at, read from the trace (or the ResearchResult) of one run."""

    run_id: str
    status: str
    answer: str = ""
    citations: list[dict[str, Any]] = Field(default_factory=list)
    evidence_doc_ids: list[str] = Field(default_factory=list, description="documents the run's findings came from")
    first_round_doc_ids: list[str] = Field(
        default_factory=list, description="documents the findings made before the first follow-up hop came from "
        "(the planner's rounds)")
    hops: list[HopFacts] = Field(default_factory=list, description="the run's follow-up hops, in order")
    tool_calls: int = 0
    llm_tokens: int = 0
    feedback: list[float] = Field(default_factory=list)
    failed_roles: list[str] = Field(default_factory=list, description="roles whose output stayed malformed")

    def found_any(self, gold_doc_ids: list[str]) -> bool:
        """Whether the run drew a finding from one of these documents."""
        return bool(set(gold_doc_ids) & set(self.evidence_doc_ids))


def _facts(
    store: TraceStore, run_id: str, record: RunRecord | ResearchResult, doc_id_for: DocIdFor | None,
    feedback: list[float],
) -> RunFacts:
    # A role failed when its reply stayed malformed on the second attempt (the graph retries once).
    failed = [e.role for e in read_events(store, run_id, MalformedReply) if e.role and e.attempt >= 2]

    def doc_id(item: Mapping[str, Any]) -> str | None:  # a citation or a finding: its doc id, else by its URL
        return item.get("doc_id") or (doc_id_for(str(item.get("source", ""))) if doc_id_for else None)

    citations = [{**c, "doc_id": doc_id(c)} for c in record.citations]
    first: list[str] = []  # doc ids of the findings before the first hop, then each hop's in its HopFacts
    hops: list[HopFacts] = []
    found_since_decision = True
    for event in _findings_and_hops(store, run_id):
        if isinstance(event, BridgeChosen):
            if found_since_decision:  # a new hop; decisions logged together (one per option) are one hop
                hops.append(HopFacts(searches=[], bridge=False))
            hops[-1].searches.append(event.search)
            hops[-1].bridge = hops[-1].bridge or bool(event.candidates)
            found_since_decision = False
        else:
            found_since_decision = True
            if (d := doc_id(event.finding)) and d not in (phase := hops[-1].doc_ids if hops else first):
                phase.append(d)
    evidence = list(dict.fromkeys([*first, *(d for h in hops for d in h.doc_ids)]))
    usage = record.usage or {}
    return RunFacts(
        run_id=run_id, status=record.status, answer=(record.answer or "").strip(), citations=citations,
        evidence_doc_ids=evidence, first_round_doc_ids=first, hops=hops,
        tool_calls=int(usage.get("tool_calls", 0)), llm_tokens=int(usage.get("llm_tokens", 0)),
        feedback=feedback, failed_roles=failed,
    )


def _findings_and_hops(store: TraceStore, run_id: str) -> list[FindingMade | BridgeChosen]:
    """The run's findings and follow-up decisions in the order they were logged. The coordinator sends the run
    to follow_up only once every step of the round has ended, so a finding logged after a decision is that
    hop's (or a later one's), and one logged before the first decision is the planner's rounds'."""
    stored = sorted((e for kind in (FindingMade.trace_kind, BridgeChosen.trace_kind) if kind
                     for e in store.iter_events(run_id, kind)), key=lambda e: e.seq)
    return [ev for e in stored if isinstance(ev := event_of(e.kind, e.payload), FindingMade | BridgeChosen)]


def facts_from_trace(store: TraceStore, run_id: str, doc_id_for: DocIdFor | None = None) -> RunFacts:
    """A logged run's facts: its record (status, answer, citations, usage, feedback) plus its events.
    `doc_id_for(url)` fills citation and finding doc ids when missing."""
    run = store.get_run(run_id)
    return _facts(store, run_id, run, doc_id_for, [float(f["score"]) for f in run.feedback])


def answer_scores(answer: str, gold: Gold) -> tuple[float, float]:
    """(EM, F1) of an answer against the gold answer and its aliases; a yes/no question (flagged, or its
    gold normalises to yes/no) counts by EM only. The eval's per-question scores use this too."""
    return exact_match(answer, gold.golds), f1(answer, gold.golds, yes_no=is_yes_no(gold.golds, gold.yes_no))


@dataclass(frozen=True)
class ScoredRun(Generic[R]):
    """One run and its scores. `error` is set (and `result`, `facts` are None) when the run raised instead
    of ending; a run that ended with status "error" has its result and facts like any other.
    `em`, `f1`, `gold_evidence` are None without gold (or, for EM/F1, without a gold answer)."""

    result: ResearchResult | None
    facts: RunFacts | None
    error: str | None = None
    em: float | None = None
    f1: float | None = None
    gold_evidence: bool | None = None  # a finding came from a gold document (doc id, or by its URL)
    reward: R | None = None

    @property
    def run_id(self) -> str | None:
        return self.result.run_id if self.result is not None else None


async def run_scored(
    question: str, runtime: ResearchRuntime, policy: RunPolicy, options: RunOptions, *,
    gold: Gold | None = None, doc_id_for: DocIdFor | None = None, reward: Callable[[RunFacts], R] | None = None,
) -> ScoredRun[R]:
    """Run `question` through the graph (`research`) and score it. Never raises for a failing run: the
    exception is returned as `error` ("Type: message"), so one broken run does not sink an eval or a round."""
    from deepresearch.agent.graph import run as graph_run  # heavy (langgraph); looked up at call time

    try:
        result = await graph_run.research(question, runtime, policy, options)
    except Exception as exc:  # reported per run: callers count failures, they do not crash on them
        return ScoredRun(result=None, facts=None, error=f"{type(exc).__name__}: {exc}")
    # The run just ended: its record in the store is this result (research wrote it), and nobody has
    # rated it yet, so the facts take the record from the result and only the events from the trace.
    facts = _facts(runtime.store, result.run_id, result, doc_id_for, [])
    em = f1_score = found = None
    if gold is not None:
        if gold.golds:
            em, f1_score = answer_scores(facts.answer, gold)
        found = facts.found_any(gold.gold_doc_ids)
    return ScoredRun(result=result, facts=facts, em=em, f1=f1_score, gold_evidence=found,
                     reward=reward(facts) if reward is not None else None)
