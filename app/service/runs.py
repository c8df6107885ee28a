"""Runs the service researches: started in the background (the request returns the run id at once),
their events kept so every subscriber sees the whole stream in order, their plan reviewed by a later
request. The HTTP API and the MCP server both drive runs through one `RunManager`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from deepresearch.agent.graph.events import RunEvent
from deepresearch.agent.graph.run import ResearchResult
from deepresearch.agent.trace.records import RunRecord
from deepresearch.agent.trace.store import RunNotFound, TraceStore
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..settings import Settings, SettingsError
from .events import ApprovalRequested, RunFinished, encode

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel

log = logging.getLogger(__name__)
KEEP_ENDED = 200  # ended runs whose live event buffers stay in memory; older ones are read from the trace


class RunRequest(BaseModel):
    """POST /runs: what to research and how."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="the question to research")
    offline: bool = Field(False, description="search the local index only")
    index: str | None = Field(None, description="local index to search (default: the `index` setting)")
    approve: bool | None = Field(None, description="pause after planning until POST /runs/{id}/plan "
                                                   "(default: the agent.auto_approve setting)")
    max_time: float | None = Field(None, gt=0, description="wall-time budget in seconds")

    @model_validator(mode="after")
    def _not_blank(self) -> RunRequest:
        if not self.question.strip():
            raise ValueError("the question is empty")
        return self


class EditedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="the step's search query (or URL, code, memory query)")
    tool: str = Field("search", description="the tool that runs it")
    goal: str = ""
    done_when: str = ""


class PlanDecision(BaseModel):
    """POST /runs/{id}/plan: accept the proposed plan, replace it by `steps`, or reject it (the run ends)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "edit", "reject"]
    steps: list[EditedStep] = Field(default_factory=list, description="the new plan (action 'edit' only)")

    @model_validator(mode="after")
    def _steps_with_edit_only(self) -> PlanDecision:
        if self.action == "edit" and not self.steps:
            raise ValueError("an edited plan needs at least one step")
        if self.action != "edit" and self.steps:
            raise ValueError("steps are given only with action 'edit'")
        return self

    def as_decision(self) -> dict[str, Any]:
        """The dict the graph's approval node resumes with (agent/graph/nodes/approval.py)."""
        if self.action == "edit":
            return {"action": "edit", "steps": [s.model_dump() for s in self.steps]}
        return {"action": self.action}


class RunInfo(BaseModel):
    """A run as the service reports it: the stored record, with the live status of a run in progress."""

    id: str
    question: str
    status: str  # queued | running | awaiting_approval | finished | budget_stop | loop_stop | rejected | error
    created_at: datetime | None = None
    duration_s: float | None = None
    answer: str | None = None
    citations: int = 0
    verified_citations: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)
    feedback: list[dict[str, Any]] = Field(default_factory=list)
    pending_plan: list[dict[str, Any]] | None = Field(None, description="the plan waiting for review")


class RunProblem(Exception):
    """A request the service refuses: `status` is the HTTP status (404 no such run, 409 wrong state,
    422 bad input)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class AssignedStore(TraceStore):
    """research() names a run when it starts it; the service names it first so that POST /runs can
    answer with the id before the run has begun (it may wait for a free slot)."""

    def __init__(self, path: Path, run_id: str):
        super().__init__(path)
        self._assigned = run_id

    def start_run(self, question: str, settings: dict[str, Any], tags: dict[str, Any] | None = None,
                  run_id: str | None = None) -> str:
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


class RunManager:
    """Starts runs on one shared model (loaded on first use: the embedded model batches concurrent runs),
    at most `max_concurrent` at once, and keeps their live state."""

    def __init__(self, settings: Settings, *, max_concurrent: int = 2, model: ChatModel | None = None):
        self.settings = settings
        self.live: dict[str, LiveRun] = {}
        self._slots = asyncio.Semaphore(max_concurrent)
        self._model = model
        self._own_model = model is None
        self._model_lock = asyncio.Lock()

    def store(self) -> TraceStore:
        return TraceStore(self.settings.paths.traces_db)

    def run_settings(self, request: RunRequest) -> Settings:
        """The server's settings with the request's overrides, validated as `ask` validates its flags."""
        from deepresearch.agent.config import question_problem

        from ..commands.ask import apply_overrides
        from ..runtime import with_served_adapter

        try:
            settings = with_served_adapter(apply_overrides(
                self.settings, model=None, search=None, adapter=None, max_time=request.max_time,
                auto_approve=None if request.approve is None else not request.approve))
        except SettingsError as exc:
            raise RunProblem(422, str(exc)) from None
        if problem := question_problem(request.question, settings.agent):
            raise RunProblem(422, problem)
        index = request.index or settings.index
        if index != "demo":
            from deepresearch.tools.index.registry import IndexRegistry

            registry = IndexRegistry(settings.tools)
            try:
                registry.open(index)
            except (LookupError, ValueError) as exc:
                raise RunProblem(422, f"index: {exc}") from None
            finally:
                registry.close()
        return settings

    async def start(self, request: RunRequest) -> LiveRun:
        import uuid

        settings = self.run_settings(request)
        live = LiveRun(run_id=uuid.uuid4().hex[:12], question=request.question)
        self.live[live.run_id] = live
        self._forget_old()
        live.task = asyncio.create_task(self._research(live, request, settings), name=f"run-{live.run_id}")
        return live

    async def _chat_model(self) -> ChatModel:
        async with self._model_lock:
            if self._model is None:
                from ..runtime import build_model_from, quiet_libraries

                quiet_libraries()
                # Loading takes seconds (the embedded model): off the loop, so other streams keep flowing.
                self._model = await asyncio.to_thread(build_model_from, self.settings)
            return self._model

    async def _research(self, live: LiveRun, request: RunRequest, settings: Settings) -> None:
        from deepresearch.agent.graph.run import RunOptions, research
        from deepresearch.tools.toolbox import build_toolbox

        from ..runtime import AgentRuntime, answering_policy, ensure_index

        index = request.index or settings.index
        store = AssignedStore(settings.paths.traces_db, live.run_id)
        result: ResearchResult | None = None
        try:
            async with self._slots:
                live.status = "running"
                await asyncio.to_thread(ensure_index, settings, index)
                model = await self._chat_model()
                toolbox = build_toolbox(settings.tools, offline=request.offline, index=index)
                live.tools = toolbox.names()
                try:
                    rt = AgentRuntime(settings=settings, store=store, model=model, toolbox=toolbox,
                                      offline=request.offline, index=index)
                    options = RunOptions(checkpoint_path=settings.paths.checkpoints_db, approve=live.review,
                                         on_event=live.publish, settings_snapshot=rt.snapshot())
                    result = await research(request.question, rt.research_runtime(), answering_policy(settings),
                                            options)
                finally:
                    await toolbox.close()
        except asyncio.CancelledError:
            # Server shutdown: the checkpoint stays, `deepresearch ask --resume ID` continues the run.
            _mark(store, live.run_id, "interrupted")
            result = ResearchResult(run_id=live.run_id, status="interrupted",
                                    stop_detail="the server stopped; continue with deepresearch ask --resume ID")
            raise
        except Exception as exc:  # a crash ends this run only; the service and other runs go on
            log.exception("run %s failed", live.run_id)
            detail = f"{type(exc).__name__}: {exc}"
            _mark(store, live.run_id, "error")
            result = ResearchResult(run_id=live.run_id, status="error", stop_detail=detail, errors=[detail])
        finally:
            store.close()
            live.finish(result or ResearchResult(run_id=live.run_id, status="error", stop_detail="no result"))

    def _forget_old(self) -> None:
        ended = [r for r in self.live.values() if r.ended]
        for old in ended[:max(0, len(ended) - KEEP_ENDED)]:
            del self.live[old.run_id]

    def resolve(self, run_id: str) -> tuple[RunRecord | None, LiveRun | None]:
        """The stored record and live state of `run_id` (a unique prefix is enough); 404 if neither."""
        live = self.live.get(run_id)
        store = self.store()
        try:
            record = store.get_run(live.run_id if live else run_id)
        except RunNotFound:
            record = None
        finally:
            store.close()
        if live is None and record is not None:
            live = self.live.get(record.id)
        if record is None and live is None:
            raise RunProblem(404, f"no run with id '{run_id}'")
        return record, live

    async def close(self) -> None:
        tasks = [r.task for r in self.live.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._own_model and self._model is not None:
            await self._model.close()


def _mark(store: TraceStore, run_id: str, status: str) -> None:
    try:
        store.set_status(run_id, status)
    except Exception:  # the run may not have reached the store (it failed before starting)
        log.debug("could not mark run %s %s", run_id, status, exc_info=True)
