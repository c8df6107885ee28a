"""`RunManager`: starts the service's runs in the background (the request returns the run id at once) on
one shared model, at most `api.max_concurrent_runs` researching at once. The HTTP API and the MCP server
both drive runs through it.

What it guarantees: an accepted run is in the trace store at once (as "queued"), and every run ends in a
final state both in the store and on its event stream (RunFinished), whatever fails, even the store itself.
A run waiting for a person's plan decision holds no slot, so waiting runs never block the others.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import uuid
from typing import TYPE_CHECKING

from deepresearch.agent.graph.run import ResearchResult
from deepresearch.agent.trace.health import TraceStoreCorrupt
from deepresearch.agent.trace.records import RunRecord
from deepresearch.agent.trace.store import RunNotFound, TraceStore

from ..settings import Settings, SettingsError
from .models import RunProblem, RunRequest
from .runs import AssignedStore, LiveRun

if TYPE_CHECKING:
    from typing import Any

    from deepresearch.agent.model.base import ChatModel

log = logging.getLogger(__name__)
KEEP_ENDED = 200  # ended runs whose live event buffers stay in memory; older ones are read from the trace
STORE_ERRORS = (sqlite3.Error, TraceStoreCorrupt, OSError)


class RunSlot:
    """One run's claim on the manager's running slots: held while it researches, given back while it waits
    for a plan decision. Cancelled while waiting for a slot, it holds none (asyncio.Semaphore guarantees)."""

    def __init__(self, slots: asyncio.Semaphore):
        self._slots = slots
        self.held = False

    async def take(self) -> None:
        await self._slots.acquire()
        self.held = True

    def give(self) -> None:
        if self.held:
            self.held = False
            self._slots.release()


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
        """Accept a run: checked, recorded as queued, then researched in the background."""
        settings = await asyncio.to_thread(self.run_settings, request)  # opens an index: off the loop
        live = LiveRun(run_id=uuid.uuid4().hex[:12], question=request.question)
        try:
            await asyncio.to_thread(self._queue, live)
        except STORE_ERRORS as exc:
            raise RunProblem(503, f"the run could not be recorded in the trace store: {exc}") from None
        self.live[live.run_id] = live
        self._forget_old()
        live.task = asyncio.create_task(self._research(live, request, settings), name=f"run-{live.run_id}")
        return live

    def _queue(self, live: LiveRun) -> None:
        store = AssignedStore(self.settings.paths.traces_db, live.run_id)
        try:
            store.queue(live.question)
        finally:
            store.close()

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
        slot = RunSlot(self._slots)
        store: AssignedStore | None = None
        result: ResearchResult | None = None
        began = False

        async def review(plan: list[dict[str, Any]]) -> dict[str, Any]:
            slot.give()  # a person may take hours to decide: the slot goes to the next run meanwhile
            decision = await live.review(plan)
            if decision["action"] != "reject":  # a rejected run only ends: it needs no slot for that
                if self._slots.locked():
                    live.status = "queued"
                await slot.take()
                live.status = "running"
            return decision

        try:
            await slot.take()
            live.status = "running"
            # Everything that can fail is inside this try: whatever fails, the run ends (store and stream).
            store = await asyncio.to_thread(AssignedStore, settings.paths.traces_db, live.run_id)
            await asyncio.to_thread(ensure_index, settings, index)
            model = await self._chat_model()
            toolbox = build_toolbox(settings.tools, offline=request.offline, index=index)
            live.tools = toolbox.names()
            try:
                rt = AgentRuntime(settings=settings, store=store, model=model, toolbox=toolbox,
                                  offline=request.offline, index=index)
                options = RunOptions(checkpoint_path=settings.paths.checkpoints_db, approve=review,
                                     on_event=live.publish, settings_snapshot=rt.snapshot())
                began = True
                result = await research(request.question, rt.research_runtime(), answering_policy(settings), options)
            finally:
                await toolbox.close()
        except asyncio.CancelledError:
            if result is None:  # (a run research() already ended keeps its end)
                # Server shutdown: the checkpoint stays, `deepresearch ask --resume ID` continues the run.
                self._mark(store, live.run_id, "interrupted")
                result = ResearchResult(run_id=live.run_id, status="interrupted", stop_detail=(
                    f"the server stopped; continue with deepresearch ask --resume {live.run_id}" if began
                    else "the server stopped before the run began"))
            raise
        except Exception as exc:  # a crash ends this run only; the service and other runs go on
            log.exception("run %s failed", live.run_id)
            if result is None:
                detail = " ".join(f"{type(exc).__name__}: {exc}".split())
                self._mark(store, live.run_id, "error")
                result = ResearchResult(run_id=live.run_id, status="error", stop_detail=detail, errors=[detail])
        finally:
            slot.give()
            if store is not None:
                store.close()
            live.finish(result or ResearchResult(run_id=live.run_id, status="error", stop_detail="no result"))

    def _mark(self, store: TraceStore | None, run_id: str, status: str) -> None:
        """Record a run's end that research() could not record: through the run's own connection, else a new
        one (the run's failed or never opened). If the store takes no write at all, the stream still ends."""
        if store is not None:
            try:
                store.set_status(run_id, status)
                return
            except Exception:
                log.warning("could not mark run %s %s; trying a new connection", run_id, status, exc_info=True)
        try:
            fresh = TraceStore(self.settings.paths.traces_db)
            try:
                fresh.set_status(run_id, status)
            finally:
                fresh.close()
        except Exception:
            log.warning("could not mark run %s %s in the trace store", run_id, status, exc_info=True)

    def _forget_old(self) -> None:
        ended = [r for r in self.live.values() if r.ended]
        for old in ended[:max(0, len(ended) - KEEP_ENDED)]:
            del self.live[old.run_id]

    def resolve(self, run_id: str) -> tuple[RunRecord | None, LiveRun | None]:
        """The stored record and live state of `run_id` (a unique prefix is enough); 404 if neither.
        Blocking (it reads the store): call it from a worker thread."""
        live = self.live.get(run_id)
        try:
            store = self.store()
            try:
                record = store.get_run(live.run_id if live else run_id)
            finally:
                store.close()
        except RunNotFound:
            record = None
        except STORE_ERRORS:
            if live is None:
                raise
            record = None  # a run this server holds is still known (and ends on its stream) without the store
        if live is None and record is not None:
            live = self.live.get(record.id)
        if record is None and live is None:
            raise RunProblem(404, f"no run with id '{run_id}'")
        return record, live

    async def close(self) -> None:
        """Cancel every run (each ends "interrupted") and close the model; safe to call again."""
        tasks = [r.task for r in self.live.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._own_model and self._model is not None:
            model, self._model = self._model, None
            await model.close()
