"""Every error the HTTP API answers is one JSON line, `{"detail": "one line"}`, whatever raised it:
FastAPI's validation lists, HTTP errors, refusals (RunProblem), a busy or damaged trace store, a bug.

The detail never echoes what it cannot encode: a lone surrogate or a NaN sent by a client once made the
error response itself fail (500 with a traceback) while it repeated the input back.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Any

from deepresearch.agent.trace.health import TraceStoreCorrupt
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from .models import RunProblem

log = logging.getLogger(__name__)
MAX_DETAIL_CHARS = 500


def one_line(text: object) -> str:
    """`text` on one line, short, and encodable (a lone surrogate becomes its \\ud800 escape)."""
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return flat if len(flat) <= MAX_DETAIL_CHARS else flat[: MAX_DETAIL_CHARS - 1] + "…"


def validation_detail(errors: Sequence[Any]) -> str:
    """The first problem of a validation error list, as `where: what` (the body's fields by their names)."""
    if not errors:
        return "invalid request"
    first = errors[0]
    loc = [str(part) for part in first.get("loc", ())]
    if loc[:1] == ["body"]:
        loc = loc[1:]
    if first.get("type") == "json_invalid":
        return f"the body is not valid JSON ({(first.get('ctx') or {}).get('error', 'decode error')})"
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{'.'.join(loc)}: {message}" if loc else message


def problem(status: int, detail: object, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": one_line(detail)}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem(422, validation_detail(exc.errors()))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        return problem(exc.status_code, exc.detail, getattr(exc, "headers", None))

    @app.exception_handler(RunProblem)
    async def _refused(request: Request, exc: RunProblem) -> JSONResponse:
        return problem(exc.status, exc.message)

    @app.exception_handler(TraceStoreCorrupt)
    async def _damaged(request: Request, exc: TraceStoreCorrupt) -> JSONResponse:
        return problem(500, f"{exc}; see deepresearch runs repair")

    @app.exception_handler(sqlite3.OperationalError)
    async def _busy(request: Request, exc: sqlite3.OperationalError) -> JSONResponse:
        log.warning("trace store unavailable for %s %s: %s", request.method, request.url.path, exc)
        return problem(503, f"the trace store is unavailable right now ({exc}); try again")

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        # Starlette logs the traceback after this answer; the client gets one line.
        return problem(500, f"internal error: {type(exc).__name__}: {exc}")
