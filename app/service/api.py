"""The HTTP API of `deepresearch serve` (FastAPI; a reference page at /docs, the OpenAPI document at /openapi.json).

  POST /runs                    start a run → 202 {id, …}; it researches in the background
  GET  /runs/{id}/events        its events as Server-Sent Events, from the first, in order; ends with RunFinished
  POST /runs/{id}/plan          accept / edit / reject the plan of a run started with "approve": true
  GET  /runs/{id}/report        the report: ?format=md|html|pdf|json
  GET  /runs, GET /runs/{id}    list runs / one run
  POST /runs/{id}/feedback      rate a run (-1 … 1), as `deepresearch runs feedback`

Errors are {"detail": "one line"} (errors.py): 401 no or wrong token, 403/421 a browser page of another site
(admission.py, on loopback), 404 no such run, 409 the run is not in a state for that, 413 a body over
4 MiB, 422 a bad body or parameter, 503 the trace store cannot take the request now.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from deepresearch.agent.graph.run import ResearchResult
from deepresearch.agent.trace.records import RunRecord
from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.sse import EventSourceResponse, ServerSentEvent

from deepresearch import __version__

from ..feedback import record_feedback
from ..report_view import ReportView, view_of_run
from ..settings import Settings
from .admission import Admission
from .docs_page import CSP, docs_html
from .errors import install_error_handlers
from .events import RunFinished, encode, stored_events
from .manager import RunManager
from .models import ErrorDetail, Feedback, PlanDecision, RunInfo, RunProblem, RunRequest, Started
from .runs import LiveRun, info_of

MEDIA = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8", "pdf": "application/pdf"}
ENDED = {"finished", "budget_stop", "loop_stop", "rejected", "error"}
MAX_BODY_BYTES = 4 * 1024 * 1024
# The errors every /runs endpoint may answer, documented with their real shape (not FastAPI's error list).
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorDetail, "description": text} for code, text in (
        (401, "no or wrong bearer token"), (404, "no such run"), (409, "the run is not in a state for that"),
        (422, "a bad body or parameter"), (503, "the trace store cannot take the request now"))}
RunId = Annotated[str, Path(min_length=1, max_length=64, description="a run id, or a unique prefix of one")]


bearer = HTTPBearer(auto_error=False, description="api.token (required when bound off loopback)")


def authorized(request: Request,
               credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
    token: str | None = request.app.state.token
    if token is None:
        return
    given = credentials.credentials if credentials is not None else ""
    # compare_digest: the time taken does not tell how much of a guessed token was right.
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


def _runs(request: Request) -> RunManager:
    return request.app.state.runs


Runs = Annotated[RunManager, Depends(_runs)]


def _resolved(run_id: RunId, manager: Runs) -> tuple[RunRecord | None, LiveRun | None]:
    return manager.resolve(run_id)


Resolved = Annotated[tuple[RunRecord | None, LiveRun | None], Depends(_resolved)]


def create_app(settings: Settings, *, token: str | None = None, max_concurrent: int = 2,
               manager: RunManager | None = None, local_only: bool = True) -> FastAPI:
    """The API over `settings`; with `token`, every /runs request needs `Authorization: Bearer <token>`;
    `local_only` (a server on loopback) refuses requests that name another host or come from another
    site's page (admission.py)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.runs = manager or RunManager(settings, max_concurrent=max_concurrent)
        app.state.loop = asyncio.get_running_loop()
        try:
            yield
        finally:
            await app.state.runs.close()

    app = FastAPI(title="deepresearch", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Research questions with cited, checked reports; stream each run's events.")
    app.state.token = token
    install_error_handlers(app)
    app.add_middleware(Admission, max_body=MAX_BODY_BYTES, local_only=local_only)

    @app.get("/health", tags=["service"])
    async def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        """This API's reference, one page that works offline (no CDN)."""
        return HTMLResponse(docs_html(app.openapi()), headers={"Content-Security-Policy": CSP})

    guarded = [Depends(authorized)]

    @app.post("/runs", status_code=202, response_model=Started, tags=["runs"], dependencies=guarded, responses=ERRORS)
    async def start_run(body: RunRequest, manager: Runs) -> Started:
        """Start researching a question. The run goes on in the background: follow `events_url`."""
        live = await manager.start(body)
        return Started(id=live.run_id, question=live.question, status=live.status,
                       events_url=f"/runs/{live.run_id}/events", report_url=f"/runs/{live.run_id}/report")

    @app.get("/runs", response_model=list[RunInfo], tags=["runs"], dependencies=guarded, responses=ERRORS)
    async def list_runs(manager: Runs, limit: Annotated[int, Query(ge=1, le=1000)] = 20,
                        status: Annotated[str | None, Query(max_length=40)] = None) -> list[RunInfo]:
        """Runs, newest first (the trace store's runs, whoever started them; queued ones included)."""
        def listed() -> list[RunRecord]:
            store = manager.store()
            try:
                return store.list_runs(limit=limit, status=status)
            finally:
                store.close()

        return [info_of(r, manager.live.get(r.id)) for r in await asyncio.to_thread(listed)]

    @app.get("/runs/{run_id}", response_model=RunInfo, tags=["runs"], dependencies=guarded, responses=ERRORS)
    async def get_run(run: Resolved) -> RunInfo:
        return info_of(*run)

    @app.get("/runs/{run_id}/events", response_class=EventSourceResponse, tags=["runs"], dependencies=guarded,
             responses=ERRORS)
    async def run_events(run: Resolved, manager: Runs, last_event_id: Annotated[str | None, Header()] = None
                         ) -> AsyncIterator[ServerSentEvent]:
        """The run's events as SSE: `event` is the event's type (PlanMade, ActionStarted, FindingMade, …,
        ApprovalRequested, RunFinished), `data` its fields, `id` its position (send Last-Event-ID to resume).
        A run this server did not start replays the events its trace kept."""
        record, live = run
        # isdecimal and ASCII: "²".isdigit() is true, and int() of it fails.
        given = (last_event_id or "").strip()
        start = int(given) + 1 if given.isascii() and given.isdecimal() and len(given) <= 12 else 0
        if live is not None:
            seen = start
            while True:
                while seen < len(live.events):  # re-checked after each send: events arrive meanwhile
                    name, data = live.events[seen]
                    yield ServerSentEvent(event=name, data=data, id=str(seen))
                    seen += 1
                if live.ended:
                    return
                await live.wait_beyond(seen)
        assert record is not None
        events = [encode(e) for e in await asyncio.to_thread(_stored, record.id, manager)]
        if record.status in ENDED:
            events.append(encode(RunFinished(**_result_of(record).model_dump())))
        for i in range(start, len(events)):
            yield ServerSentEvent(event=events[i][0], data=events[i][1], id=str(i))

    def _stored(run_id: str, manager: RunManager) -> list[Any]:
        store = manager.store()
        try:
            return stored_events(store, run_id)
        finally:
            store.close()

    @app.post("/runs/{run_id}/plan", response_model=RunInfo, tags=["runs"], dependencies=guarded, responses=ERRORS)
    async def review_plan(body: PlanDecision, run: Resolved) -> RunInfo:
        """Accept, edit (new steps: query, tool, goal) or reject the plan a run waits with (409 if it waits
        for none). Edited steps are checked first (422: unknown tool, empty query); the run keeps waiting."""
        record, live = run
        if live is None:
            raise RunProblem(409, f"run {record.id if record else ''} is not waiting for a plan decision")
        live.decide(body)
        await asyncio.sleep(0)  # let the run take the decision before reporting its state
        return info_of(record, live)

    @app.get("/runs/{run_id}/report", tags=["runs"], dependencies=guarded,
             responses=ERRORS | {200: {"content": {m: {} for m in MEDIA.values()} | {"application/json": {}}}})
    async def report(run: Resolved, format: Literal["md", "html", "pdf", "json"] = "md") -> Response:
        """The report: markdown, one self-contained HTML page, a PDF (printed by Chromium) or JSON (answer,
        key points with their citations or an open question's sections with each sentence's check, sources with
        quotes). 409 while the run has no report yet."""
        record, live = run
        if record is None or not record.report:
            status = live.status if live is not None and not live.ended else (record.status if record else "queued")
            raise RunProblem(409, f"run {record.id if record else live.run_id if live else ''} has no report "
                                  f"({status})")
        view = view_of_run(record)
        if format == "json":
            return JSONResponse(ReportView.model_validate(view).model_dump(mode="json"))
        from ..report_export import render_report
        from ..report_pdf import PdfError

        try:
            data = await asyncio.to_thread(render_report, view, format, settings.tools.browser)
        except PdfError as exc:
            raise HTTPException(500, str(exc)) from None
        return Response(data, media_type=MEDIA[format])

    @app.post("/runs/{run_id}/feedback", response_model=RunInfo, tags=["runs"], dependencies=guarded, responses=ERRORS)
    async def feedback(body: Feedback, run: Resolved, manager: Runs) -> RunInfo:
        """Rate a run; `deepresearch train --from-runs` learns from ratings. 409 before the run is stored."""
        record, live = run
        if record is None:
            raise RunProblem(409, f"run {live.run_id if live else ''} has not started yet; rate it when it ends")
        run_id = record.id

        def rated() -> RunRecord:
            store = manager.store()
            try:
                record_feedback(store, manager.settings.tools, run_id, body.score, body.comment)
                return store.get_run(run_id)
            finally:
                store.close()

        return info_of(await asyncio.to_thread(rated), live)

    return app


def stop_runs_soon(app: FastAPI) -> None:
    """End every run now, from the stop signal's handler: each run is marked interrupted and its event
    stream ends with RunFinished, so the server need not wait out the open streams (nor cut them off)."""
    loop = getattr(app.state, "loop", None)
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(lambda: loop.create_task(app.state.runs.close()))


def _result_of(record: RunRecord) -> ResearchResult:
    return ResearchResult(run_id=record.id, status=record.status, answer=record.answer or "",
                          report=record.report or "", citations=record.citations, usage=record.usage)
