"""Typed records written to and read back from the trace store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from deepresearch.agent.model.types import Completion, Sampling
from pydantic import BaseModel, Field


@dataclass(frozen=True)
class LLMCall:
    """One model call as the trace keeps it: the prompt, the grammar and sampling it ran under, the reply.
    `schema` lets the trainer replay the grammar's masks; `sampling` says what the logprobs were drawn under."""

    role: str
    messages: list[dict[str, Any]]
    completion: Completion
    prompt_version: str | None = None
    step: str | int | None = None
    sampling: Sampling | None = None
    schema: dict[str, Any] | None = None


class TraceEvent(BaseModel):
    seq: int
    kind: str
    ts: float
    payload: dict[str, Any]


class RunRecord(BaseModel):
    id: str
    question: str
    status: str
    created_at: datetime
    finished_at: datetime | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    tags: dict[str, Any] = Field(default_factory=dict)
    answer: str | None = None
    report: str | None = None
    citations: list[dict[str, Any]] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    feedback: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def duration_s(self) -> float | None:
        return (self.finished_at - self.created_at).total_seconds() if self.finished_at else None


class RunExport(RunRecord):
    """A run with all its events: the unit of JSONL/Parquet export."""

    events: list[TraceEvent] = Field(default_factory=list)
