"""What clients send the service and what it answers: request bodies with a bound on every input, the run as
reported, and the refusal every endpoint and tool answers with.

Every string has a length cap and every number is finite, so no request can make the service do unbounded
work (a 20,000-step plan edit once ran for minutes) or fail rendering its own error (a NaN echoed back).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The caps sit above every setting that narrows them (agent.max_question_chars allows at most 1,000,000).
MAX_QUESTION_CHARS = 1_000_000
MAX_EDITED_STEPS = 50  # the planner writes at most 20 (agent.budget.max_plan_steps) plus the question's search
MAX_STEP_QUERY_CHARS = 20_000  # a step's input may be code for the python tool
MAX_STEP_TEXT_CHARS = 2_000
MAX_WALL_S = 7 * 24 * 3600.0


class RunRequest(BaseModel):
    """POST /runs: what to research and how."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="the question to research")
    offline: bool = Field(False, description="search the local index only")
    index: str | None = Field(None, max_length=64, description="local index to search (default: the `index` setting)")
    approve: bool | None = Field(None, description="pause after planning until POST /runs/{id}/plan "
                                                   "(default: the agent.auto_approve setting)")
    max_time: float | None = Field(None, gt=0, le=MAX_WALL_S, allow_inf_nan=False,
                                   description="wall-time budget in seconds")

    @model_validator(mode="after")
    def _not_blank(self) -> RunRequest:
        if not self.question.strip():
            raise ValueError("the question is empty")
        return self


class EditedStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_STEP_QUERY_CHARS,
                       description="the step's search query (or URL, code, memory query)")
    tool: str = Field("search", max_length=64, description="the tool that runs it")
    goal: str = Field("", max_length=MAX_STEP_TEXT_CHARS)
    done_when: str = Field("", max_length=MAX_STEP_TEXT_CHARS)


class PlanDecision(BaseModel):
    """POST /runs/{id}/plan: accept the proposed plan, replace it by `steps`, or reject it (the run ends)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "edit", "reject"]
    steps: list[EditedStep] = Field(default_factory=list, max_length=MAX_EDITED_STEPS,
                                    description="the new plan (action 'edit' only)")

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


class Feedback(BaseModel):
    score: float = Field(ge=-1.0, le=1.0, allow_inf_nan=False, description="-1 (bad) … 1 (good)")
    comment: str | None = Field(None, max_length=10_000, description="what was right or wrong")


class RunInfo(BaseModel):
    """A run as the service reports it: the stored record, with the live status of a run in progress."""

    id: str
    question: str
    # queued | running | awaiting_approval | finished | budget_stop | loop_stop | rejected | error | interrupted
    status: str
    created_at: datetime | None = None
    duration_s: float | None = None
    answer: str | None = None
    citations: int = 0
    verified_citations: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)
    feedback: list[dict[str, Any]] = Field(default_factory=list)
    pending_plan: list[dict[str, Any]] | None = Field(None, description="the plan waiting for review")


class Started(RunInfo):
    events_url: str
    report_url: str


class ErrorDetail(BaseModel):
    """Every error the API answers: one line saying what is wrong."""

    detail: str


class RunProblem(Exception):
    """A request the service refuses: `status` is the HTTP status (404 no such run, 409 wrong state,
    422 bad input, 503 the trace store cannot take the run now)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message
