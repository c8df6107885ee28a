"""Shapes the search tool takes and returns, and the failure a backend raises."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

FailureKind = Literal["rate_limited", "timeout", "network", "http_error", "bad_response", "cooling_down"]


class SearchInput(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="what to search for")


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str
    backend: str
    rank: int
    doc_id: str | None = Field(None, description="document id when the hit comes from a local index")


class BackendAttempt(BaseModel):
    """One backend tried for one query; the list of these shows the fallback path in the trace."""

    backend: str
    status: Literal["ok", "empty", "error", "skipped"]
    hits: int = 0
    cached: bool = False
    error_kind: FailureKind | None = None
    error: str | None = None
    duration_s: float = 0.0


class SearchOutput(BaseModel):
    query: str
    backend: str | None = Field(None, description="backend whose hits these are")
    hits: list[SearchHit]
    attempts: list[BackendAttempt]


class BackendFailure(Exception):
    def __init__(self, kind: FailureKind, message: str, *, retry_after_s: float | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.retry_after_s = retry_after_s
