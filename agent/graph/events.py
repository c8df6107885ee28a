"""What happens in a research run, as typed events.

A node records an event once (`ResearchContext.record`); the event says whether it belongs in the
trace (`trace_kind`, and its payload there) and whether it is shown as progress (`streamed`: the event
object itself goes to the run's `on_event` callback). Readers get the same types back from a stored
trace with `read_events` instead of parsing dicts by key.

The trace payloads are exactly the JSON written before these types existed, and `from_trace` fills
in what an older or hand-written payload lacks, so every stored trace still reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from .answer_events import AnswerScored, CitationsChecked, OptionDecided, ScoredCandidate
from .report.report_events import ReportChecked
from .run_event import EventT, RunEvent
from .state import Finding, PlanStep, StopReason, Usage

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore



# --- planning ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlanMade(RunEvent):
    """The planner's steps (the first plan, or a re-plan after a round found nothing)."""

    trace_kind: ClassVar[str | None] = "plan"
    streamed: ClassVar[bool] = True
    steps: list[PlanStep]
    replan: bool = False

    def trace_payload(self) -> dict[str, Any]:
        return {"steps": self.steps, "replan": self.replan}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> PlanMade:
        return cls(steps=list(payload.get("steps") or []), replan=bool(payload.get("replan")))


@dataclass(frozen=True)
class PlanReviewed(RunEvent):
    """The user's decision on the proposed plan: {"action": "accept" | "reject" | "edit", ...}."""

    trace_kind: ClassVar[str | None] = "plan_decision"
    decision: dict[str, Any] | None

    def trace_payload(self) -> dict[str, Any]:
        return {"decision": self.decision}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> PlanReviewed:
        return cls(decision=payload.get("decision"))


@dataclass(frozen=True)
class PlanEdited(RunEvent):
    """The plan as the user edited it."""

    trace_kind: ClassVar[str | None] = "plan"  # read apart from PlanMade by its `edited` flag
    steps: list[PlanStep]

    def trace_payload(self) -> dict[str, Any]:
        return {"steps": self.steps, "edited": True}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> PlanEdited:
        return cls(steps=list(payload.get("steps") or []))


@dataclass(frozen=True)
class BridgeChosen(RunEvent):
    """The follow-up hop: the entity of the evidence the next search looks for, out of `options`;
    `scores` when an adapter trained for the choice scored them (scoring.py), else empty.
    `candidates` (each name's sentence and features) and `read` (doc ids, else URLs, of the sources read
    before the hop) let the trainer learn the choice from the run (train/bridge_examples.py).
    `step` is the step that searches it (not in the trace, which keeps only the choice)."""

    trace_kind: ClassVar[str | None] = "decision"
    streamed: ClassVar[bool] = True
    search: str
    options: list[str]
    step: PlanStep | None = None
    scores: list[float] = field(default_factory=list)
    candidates: list[ScoredCandidate] = field(default_factory=list)
    read: list[str] = field(default_factory=list)

    def trace_payload(self) -> dict[str, Any]:
        return {"search": self.search, "options": self.options} | (
            {"scores": [round(s, 4) for s in self.scores]} if self.scores else {}) | (
            {"candidates": [c.payload() for c in self.candidates], "read": self.read} if self.candidates else {})

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> BridgeChosen:
        return cls(search=str(payload.get("search", "")), options=list(payload.get("options") or []),
                   scores=[float(s) for s in payload.get("scores") or []],
                   candidates=[ScoredCandidate.from_payload(c) for c in payload.get("candidates") or []],
                   read=[str(r) for r in payload.get("read") or []])


@dataclass(frozen=True)
class HopSkipped(RunEvent):
    """No follow-up hop: the first round's best answer was already likely enough right (agent.hop_skip_confidence),
    so a bridge search could only bring another entity's sources to outrank it."""

    trace_kind: ClassVar[str | None] = "hop_skipped"
    streamed: ClassVar[bool] = True
    answer: str
    confidence: float

    def trace_payload(self) -> dict[str, Any]:
        return {"answer": self.answer, "confidence": round(self.confidence, 4)}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> HopSkipped:
        return cls(answer=str(payload.get("answer", "")), confidence=float(payload.get("confidence", 0.0)))


# --- coordinating --------------------------------------------------------------------------------
@dataclass(frozen=True)
class UsageReported(RunEvent):
    """The run's spending so far, at the start of each coordinator turn."""

    streamed: ClassVar[bool] = True
    usage: Usage
    round: int
    findings: int


@dataclass(frozen=True)
class StepsDispatched(RunEvent):
    """A round starts: these steps run in parallel."""

    streamed: ClassVar[bool] = True
    round: int
    steps: list[int]


@dataclass(frozen=True)
class Stopped(RunEvent):
    """The run stops early: a budget ran out or no round added evidence (a loop)."""

    trace_kind: ClassVar[str | None] = "budget"
    streamed: ClassVar[bool] = True
    reason: StopReason
    detail: str

    def trace_payload(self) -> dict[str, Any]:
        return {"stop_reason": self.reason, "detail": self.detail}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> Stopped:
        return cls(reason=payload.get("stop_reason", "budget_stop"), detail=str(payload.get("detail", "")))


@dataclass(frozen=True)
class Replanning(RunEvent):
    """A round found no evidence: back to the planner."""

    trace_kind: ClassVar[str | None] = "replan"
    streamed: ClassVar[bool] = True
    round: int
    why: str = "no evidence yet"

    def trace_payload(self) -> dict[str, Any]:
        return {"round": self.round, "why": self.why}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> Replanning:
        return cls(round=int(payload.get("round", 0)), why=str(payload.get("why", "")))


# --- executing -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ActionStarted(RunEvent):
    """An executor makes a tool call (the call itself is in the trace as a `tool` event)."""

    streamed: ClassVar[bool] = True
    step: int
    tool: str
    input: str


@dataclass(frozen=True)
class ActionNoted(RunEvent):
    """What the user should know about a tool call that was made: it failed, or it worked another way than
    asked (a web search backend failed and the local index answered). The call is in the trace."""

    streamed: ClassVar[bool] = True
    step: int
    tool: str
    note: str


@dataclass(frozen=True)
class RepeatSkipped(RunEvent):
    """An executor's call was already made in this run, so it was not made again."""

    trace_kind: ClassVar[str | None] = "loop"
    step: int
    repeated: str  # the call's signature

    def trace_payload(self) -> dict[str, Any]:
        return {"step": self.step, "repeated": self.repeated}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> RepeatSkipped:
        return cls(step=int(payload.get("step", -1)), repeated=str(payload.get("repeated", "")))


@dataclass(frozen=True)
class FindingMade(RunEvent):
    """Evidence: a claim with its verbatim quote and source (shown as progress: the source found)."""

    trace_kind: ClassVar[str | None] = "finding"
    streamed: ClassVar[bool] = True
    finding: Finding

    def trace_payload(self) -> dict[str, Any]:
        return dict(self.finding)

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> FindingMade:
        return cls(Finding(
            step_id=int(payload.get("step_id", -1)), claim=str(payload.get("claim", "")),
            quote=str(payload.get("quote", "")), source=str(payload.get("source", "")),
            title=str(payload.get("title", "")), doc_id=payload.get("doc_id"),
            start=int(payload.get("start", -1)), end=int(payload.get("end", -1)),
        ))


@dataclass(frozen=True)
class StepFailed(RunEvent):
    """An executor step raised; the run goes on without it."""

    trace_kind: ClassVar[str | None] = "error"  # read apart from the other errors by its fields
    step: int
    error: str

    def trace_payload(self) -> dict[str, Any]:
        return {"step": self.step, "error": self.error}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> StepFailed:
        return cls(step=int(payload.get("step", -1)), error=str(payload.get("error", "")))


@dataclass(frozen=True)
class MalformedReply(RunEvent):
    """A role's reply did not parse or validate. The graph retries once, so attempt 2 means the role
    failed for good (the trainer's malformed tier)."""

    trace_kind: ClassVar[str | None] = "error"
    role: str
    step: str | None
    attempt: int
    error: str

    def trace_payload(self) -> dict[str, Any]:
        return {"role": self.role, "step": self.step, "attempt": self.attempt, "error": self.error}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> MalformedReply:
        return cls(role=str(payload.get("role", "")), step=payload.get("step"),
                   attempt=int(payload.get("attempt", 1)), error=str(payload.get("error", "")))


@dataclass(frozen=True)
class RunFailed(RunEvent):
    """A baseline eval system failed (the graph ends such runs with status "error" instead)."""

    trace_kind: ClassVar[str | None] = "error"
    message: str

    def trace_payload(self) -> dict[str, Any]:
        return {"message": self.message}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> RunFailed:
        return cls(message=str(payload.get("message", "")))


# --- the trace ----------------------------------------------------------------------------------
def log_event(store: TraceStore, run_id: str, event: RunEvent, task: str | None = None) -> None:
    """Keep `event` in the run's trace (callers outside the graph, e.g. the eval baselines; `task`: the graph
    task recording it)."""
    if event.trace_kind is not None:
        store.log_event(run_id, event.trace_kind, event.trace_payload(), task)


def event_of(kind: str, payload: dict[str, Any]) -> RunEvent | None:
    """The typed event of one stored trace event; None for kinds that are not run events (llm, tool, …)."""
    if kind == "plan":
        return PlanEdited.from_trace(payload) if payload.get("edited") else PlanMade.from_trace(payload)
    if kind == "error":
        if "role" in payload:
            return MalformedReply.from_trace(payload)
        return StepFailed.from_trace(payload) if "step" in payload else RunFailed.from_trace(payload)
    reader = _READERS.get(kind)
    return reader.from_trace(payload) if reader is not None else None


_READERS: dict[str, type[RunEvent]] = {
    cls.trace_kind: cls for cls in (PlanReviewed, BridgeChosen, HopSkipped, Stopped, Replanning, RepeatSkipped,
                                    FindingMade, AnswerScored, OptionDecided, CitationsChecked, ReportChecked)
    if cls.trace_kind is not None
}


def read_events(store: TraceStore, run_id: str, of_type: type[EventT]) -> list[EventT]:
    """The run's events of one type, in the order they were recorded."""
    return list(_iter(store, run_id, of_type))


def _iter(store: TraceStore, run_id: str, of_type: type[EventT]) -> Iterator[EventT]:
    if of_type.trace_kind is None:
        raise ValueError(f"{of_type.__name__} is progress only; it is not kept in the trace")
    for stored in store.iter_events(run_id, of_type.trace_kind):
        event = event_of(stored.kind, stored.payload)
        if isinstance(event, of_type):
            yield event
