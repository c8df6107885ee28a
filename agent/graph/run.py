"""`research()`: run (or resume) one question through the graph, with progress events and a trace."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.model.base import ChatModel, ModelError
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools import sqlite_db
from deepresearch.tools.sqlite_health import StoreDamaged, full_check, is_corruption
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from .builder import build_graph
from .context import ResearchContext
from .events import RunEvent
from .state import PlanStep

if TYPE_CHECKING:
    from deepresearch.tools.toolbox import Toolbox

ApproveFn = Callable[[list[PlanStep]], Awaitable[dict[str, Any]]]
EventFn = Callable[[RunEvent], None]


class ResumeError(RuntimeError):
    pass


class ResearchResult(BaseModel):
    run_id: str
    status: str
    stop_detail: str = ""
    answer: str = ""
    report: str = ""
    citations: list[dict[str, Any]] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    plan: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)

    @property
    def verified_citations(self) -> int:
        return sum(1 for c in self.citations if c.get("verified"))


CHECKPOINT_STORE = "checkpoint store"


async def _checkpointer(stack: AsyncExitStack, path: Path | None):
    """The checkpoint store of `ask --resume`, ready (its tables made) before a run starts in it: a damaged
    file is StoreDamaged naming it. Any number of processes may share it: WAL (LangGraph's setup switches it
    on) and the busy timeout every store of ours waits for another process's write."""
    if path is None:
        return InMemorySaver()
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = await stack.enter_async_context(aiosqlite.connect(path, timeout=sqlite_db.BUSY_TIMEOUT_S))
        await sqlite_db.use_wal_async(conn)  # LangGraph's own switch fails at once while another process writes
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            raise StoreDamaged(CHECKPOINT_STORE, path, str(exc)) from None
        raise
    return saver


def _named_damage(exc: sqlite3.DatabaseError, checkpoints: Path | None) -> StoreDamaged | None:
    """The damaged store behind a SQLite error met mid-run, when it is the checkpoint store (the trace store
    names itself; a tool's store fails its tool call)."""
    if checkpoints is None or not is_corruption(exc):
        return None
    problem = full_check(checkpoints)
    return StoreDamaged(CHECKPOINT_STORE, checkpoints, problem) if problem else None


# Writes a task leaves when it did not finish: it runs again on resume (LangGraph's ERROR/INTERRUPT/RESUME).
_UNFINISHED_WRITES = frozenset({"__error__", "__interrupt__", "__resume__"})


async def _cut_short(graph: Any, config: dict[str, Any], snapshot: Any) -> list[str]:
    """The tasks of the checkpoint's next step that did not finish: a resume runs them again from their start
    (same task ids), so what they logged before the kill is superseded. Tasks of that step that finished
    have their writes saved and are not run again; their events stand."""
    saved = await graph.checkpointer.aget_tuple(config)
    finished = {task for task, channel, _ in (saved.pending_writes or []) if channel not in _UNFINISHED_WRITES}
    return [t.id for t in snapshot.tasks if t.id not in finished]


@dataclass(frozen=True)
class ResearchRuntime:
    """What a run runs on: the model, the tools, the trace store and the agent's settings."""

    model: ChatModel
    toolbox: Toolbox
    store: TraceStore
    settings: AgentSettings


@dataclass(frozen=True)
class RunOptions:
    """How one run is driven and recorded, apart from how it decodes (RunPolicy).

    `resume_run_id` continues an interrupted run (needs `checkpoint_path`); `run_id` is the id a new run
    gets (default: a fresh one; a caller that names it can tell the user which run to resume after Ctrl-C);
    `approve` reviews the plan when settings ask for approval; `on_event` gets every progress event as it
    happens; `settings_snapshot` is what the run records as its settings (default: the agent settings)."""

    tags: dict[str, Any] | None = None
    run_id: str | None = None
    checkpoint_path: Path | None = None
    resume_run_id: str | None = None
    approve: ApproveFn | None = None
    on_event: EventFn | None = None
    settings_snapshot: dict[str, Any] | None = None


async def research(
    question: str | None, runtime: ResearchRuntime, policy: RunPolicy = RunPolicy(),
    options: RunOptions = RunOptions(),
) -> ResearchResult:
    """Answer `question` (or resume run `options.resume_run_id`). Never raises for model/tool misbehaviour:
    such failures end the run with status "error" and are in the trace. Whatever else stops it ends it too:
    cancelled or interrupted (Ctrl-C) it is "interrupted" (resumable), any other exception makes it "error"
    before the exception goes on, so that no run is left "running"."""
    store, settings = runtime.store, runtime.settings
    resume_run_id = options.resume_run_id
    if resume_run_id:
        run = store.get_run(resume_run_id)
        if run.status not in ("running", "interrupted", "error"):
            raise ResumeError(f"run {run.id} already ended ({run.status}); nothing to resume")
        run_id, question = run.id, run.question
    elif not question or not question.strip():
        raise ValueError("the question is empty")
    started = time.time()
    async with AsyncExitStack() as stack:
        # The checkpoint store opens before the run is recorded: a damaged one stops nothing half-way.
        checkpointer = await _checkpointer(stack, options.checkpoint_path)
        if resume_run_id:
            store.set_status(run_id, "running")
        else:
            recorded = options.settings_snapshot or {"agent": settings.model_dump(mode="json")}
            run_id = store.start_run(question, recorded, options.tags, options.run_id)
        ctx = ResearchContext(model=runtime.model, toolbox=runtime.toolbox, store=store, settings=settings,
                              run_id=run_id, policy=policy)
        try:
            return await _drive(build_graph(checkpointer), ctx, question, started, options)
        except (asyncio.CancelledError, KeyboardInterrupt):
            _settle(store.set_status, run_id, "interrupted")  # the checkpoint stays: --resume continues it
            raise
        except sqlite3.DatabaseError as exc:
            _settle(store.finish_run, run_id, "error", None, None, [], {"wall_s": round(time.time() - started, 2)})
            damage = _named_damage(exc, options.checkpoint_path)
            if damage is not None:
                raise damage from None
            raise
        except BaseException:
            _settle(store.finish_run, run_id, "error", None, None, [], {"wall_s": round(time.time() - started, 2)})
            raise


def _settle(end: Callable[..., Any], *args: Any) -> None:
    """End a run that an exception stops; that exception, not a second one from a failing store, is reported."""
    with contextlib.suppress(Exception):
        end(*args)


async def _drive(graph: Any, ctx: ResearchContext, question: str | None, started: float,
                 options: RunOptions) -> ResearchResult:
    store, run_id, on_event, approve = ctx.store, ctx.run_id, options.on_event, options.approve
    config = {"configurable": {"thread_id": run_id}, "recursion_limit": 200}
    if options.resume_run_id:
        snapshot = await graph.aget_state(config)
        if not snapshot.values:
            raise ResumeError(f"run {run_id} has no checkpoint to resume from (was it run with --no-checkpoint?)")
        store.supersede(run_id, await _cut_short(graph, config, snapshot))
        graph_input: Any = None
    else:
        graph_input = {"question": question, "started_at": started, "round": 0}
    try:
        while True:
            # durability="sync": a step's checkpoint is on disk before the next step starts,
            # so kill -9 loses at most the step in flight.
            async for mode, chunk in graph.astream(graph_input, config, context=ctx, durability="sync",
                                                   stream_mode=["custom", "updates"]):
                if mode == "custom" and on_event:
                    on_event(chunk)
            snapshot = await graph.aget_state(config)
            pending = [i for t in snapshot.tasks for i in t.interrupts]
            if not pending:
                break
            decision = await approve(pending[0].value["plan"]) if approve else {"action": "accept"}
            graph_input = Command(resume=decision)
    except (ModelError, OSError) as exc:
        # Infrastructure failed (model server gone, disk full): end the run, keep its trace.
        usage = {"wall_s": round(time.time() - started, 2)}
        store.finish_run(run_id, "error", None, None, [], usage)
        return ResearchResult(run_id=run_id, status="error", stop_detail=str(exc), errors=[str(exc)], usage=usage)
    values = snapshot.values
    usage = {**values.get("usage", {}), "wall_s": round(time.time() - started, 2)}
    status = values.get("stop_reason") or "finished"
    result = ResearchResult(
        run_id=run_id, status=status, stop_detail=values.get("stop_detail", ""), answer=values.get("answer", ""),
        report=values.get("report", ""), citations=list(values.get("citations", [])), usage=usage,
        plan=list(values.get("plan", [])), errors=list(values.get("step_errors", [])),
    )
    store.finish_run(run_id, status, result.answer, result.report, result.citations, usage)
    return result
