"""A run the service researches, as it lives in memory and in the trace store: its events kept so every
subscriber sees the whole stream in order, its plan reviewed by a later request, and its row in the store
from the moment it is accepted (queued) to its end. `RunManager` (manager.py) starts and runs them; the
TUI drives its runs through `LiveRun` and `AssignedStore` too.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepresearch.agent.graph.events import RunEvent
from deepresearch.agent.graph.run import ResearchResult
from deepresearch.agent.trace.records import RunRecord
from deepresearch.agent.trace.redact import redact_secrets
from deepresearch.agent.trace.store import TraceStore
from pydantic import BaseModel

from .events import ApprovalRequested, RunFinished, encode
from .models import EditedStep, PlanDecision, RunInfo, RunProblem

__all__ = ["AssignedStore", "EditedStep", "LiveRun", "PlanDecision", "RunProblem", "info_of"]  # the TUI's imports


class AssignedStore(TraceStore):
    """research() names a run when it starts it; the service names it first so that POST /runs can
    answer with the id before the run has begun (it may wait for a free slot). A run the service accepted
    is in the store from that moment, as "queued" (`queue`), so every reader (GET /runs, `runs list`,
    another server) sees it while it waits; research() then starts that row instead of adding one."""

    def __init__(self, path: Path, run_id: str):
        super().__init__(path)
        self._assigned = run_id

    def queue(self, question: str) -> None:
        with self._db() as db:
            db.execute("INSERT INTO runs (id, question, settings, tags, status, created_at) "
                       "VALUES (?, ?, '{}', '{}', 'queued', ?)", (self._assigned, question, time.time()))

    def start_run(self, question: str, settings: dict[str, Any], tags: dict[str, Any] | None = None,
                  run_id: str | None = None) -> str:
        if run_id in (None, self._assigned):
            recorded = json.dumps(redact_secrets(settings), ensure_ascii=False, default=str)
            with self._db() as db:  # the queued row becomes the running run (its time: when research began)
                claimed = db.execute(
                    "UPDATE runs SET settings=?, tags=?, status='running', created_at=? WHERE id=? AND status='queued'",
                    (recorded, json.dumps(tags or {}, ensure_ascii=False, default=str), time.time(), self._assigned),
                ).rowcount
            if claimed:
                return self._assigned
        return super().start_run(question, settings, tags, run_id or self._assigned)


@dataclass
class LiveRun:
    run_id: str
    question: str
    status: str = "queued"
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    result: ResearchResult | None = None
    pending_plan: list[dict[str, Any]] | None = None
    tools: list[str] = field(default_factory=list)
    _decision: asyncio.Future[dict[str, Any]] | None = None
    # Set (and replaced) on every new event: a waiter holds the one it awaits, so none misses a wake-up,
    # and no task is spawned per event.
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    @property
    def ended(self) -> bool:
        return self.result is not None

    def publish(self, event: RunEvent | BaseModel) -> None:
        """Keep the event and wake every subscriber (called from the graph's event callback, on the loop)."""
        self.events.append(encode(event))
        woken, self._wake = self._wake, asyncio.Event()
        woken.set()

    async def wait_beyond(self, seen: int) -> None:
        """Until there are more than `seen` events or the run has ended."""
        while len(self.events) <= seen and not self.ended:
            await self._wake.wait()

    async def review(self, plan: list[dict[str, Any]]) -> dict[str, Any]:
        """The graph's approve callback: wait for POST /runs/{id}/plan."""
        self._decision = asyncio.get_running_loop().create_future()
        self.pending_plan, self.status = plan, "awaiting_approval"
        self.publish(ApprovalRequested(steps=plan))
        try:
            return await self._decision
        finally:
            self.pending_plan, self._decision, self.status = None, None, "running"

    def decide(self, decision: PlanDecision) -> None:
        if self.pending_plan is None or self._decision is None or self._decision.done():
            raise RunProblem(409, f"run {self.run_id} is not waiting for a plan decision ({self.status})")
        if decision.action == "edit":
            from deepresearch.agent.graph.nodes.approval import apply_edit

            try:  # the graph would fail the run on a bad edit; refuse it here instead, the run still waits
                apply_edit(self.pending_plan, decision.as_decision()["steps"], self.tools)
            except ValueError as exc:
                raise RunProblem(422, str(exc)) from None
        self._decision.set_result(decision.as_decision())

    def finish(self, result: ResearchResult) -> None:
        self.result, self.status = result, result.status
        self.publish(RunFinished(**result.model_dump()))


def info_of(record: RunRecord | None, live: LiveRun | None) -> RunInfo:
    if record is None:
        assert live is not None
        return RunInfo(id=live.run_id, question=live.question, status=live.status, pending_plan=live.pending_plan)
    info = RunInfo(
        id=record.id, question=record.question, status=record.status, created_at=record.created_at,
        duration_s=record.duration_s, answer=record.answer, citations=len(record.citations),
        verified_citations=sum(1 for c in record.citations if c.get("verified")), usage=record.usage,
        feedback=record.feedback,
    )
    if live is not None and not live.ended:  # the store says "running" while the run waits for review
        info.status, info.pending_plan = live.status, live.pending_plan
    return info
