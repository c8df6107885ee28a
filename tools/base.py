"""The small interface every tool implements, so the graph, the trace and the trainer treat them alike.

A tool has a name, a one-line description for the model, a pydantic input schema the model fills
(kept small and flat so a 135M model can fill it under a grammar), and an async `run` that returns
a typed result or raises `ToolFailure` with a kind the caller can act on.

It also describes itself to the agent, which speaks to tools in one flat string (`{"tool", "input"}`):
`args_from` turns that string into its arguments, `observe` says what a call returned (for the next
decision), `sources` lists the sources a call surfaced (for reading), and `notes` what a call before
planning found (for the planner's prompt). `plannable` tools are offered to the planner and the
executors. Adding a tool is its file plus one line in the toolbox's registration (toolbox.py).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT", bound=BaseModel)


class ToolFailure(Exception):
    """A tool refused or failed. `kind` is a short machine-readable tag (e.g. "blocked", "timeout")."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class ToolOutcome(BaseModel):
    """What the caller (graph, trace) records for one call."""

    tool: str
    input: dict[str, Any]
    output: dict[str, Any] | None = None
    error: str | None = None
    error_kind: str | None = None
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class Surfaced(BaseModel):
    """A source a call surfaced: a search hit to open, or a page or file the call read in full (`text`)."""

    url: str
    title: str = ""
    doc_id: str | None = None
    text: str | None = None  # None: open it to read it


class Tool(ABC, Generic[InputT, OutputT]):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    plannable: ClassVar[bool] = False  # offered to the planner and the executors
    before_planning: ClassVar[bool] = False  # called with the question before the planner plans (its `notes`)

    @abstractmethod
    async def run(self, args: InputT) -> OutputT: ...

    # --- how the agent uses it --------------------------------------------------------------
    def args_from(self, value: str) -> dict[str, Any]:
        """The arguments for the agent's flat input string: the input model's first field."""
        return {next(iter(self.input_model.model_fields)): value}

    def observe(self, value: str, output: dict[str, Any]) -> str:
        """A short text of what a call with input `value` returned, for the executor's next decision: plain
        text, cut short. The input and the output are untrusted: the executor fences every observation."""
        return f"{self.name}({value!r}) →\n" + str(output.get("text") or output)[:300]

    def sources(self, output: dict[str, Any]) -> list[Surfaced]:
        """The sources a call surfaced, best first (none by default)."""
        return []

    def caveat(self, output: dict[str, Any]) -> str | None:
        """One line the user should see about a call that worked another way than asked (none by default)."""
        return None

    def notes(self, output: dict[str, Any]) -> list[str]:
        """What a call made before planning found, as notes for the planner (none by default)."""
        return []

    async def invoke(self, raw: dict[str, Any]) -> ToolOutcome:
        """Validate raw model-filled arguments, run, and never raise: errors become an outcome."""
        start = time.perf_counter()
        try:
            args = self.input_model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "input"
            return ToolOutcome(
                tool=self.name, input=raw, error=f"bad arguments: {where}: {first['msg']}",
                error_kind="bad_args", duration_s=time.perf_counter() - start,
            )
        try:
            result = await self.run(args)  # type: ignore[arg-type]
            return ToolOutcome(
                tool=self.name, input=raw, output=result.model_dump(mode="json"),
                duration_s=time.perf_counter() - start,
            )
        except ToolFailure as exc:
            return ToolOutcome(
                tool=self.name, input=raw, error=exc.message, error_kind=exc.kind,
                duration_s=time.perf_counter() - start,
            )
        except Exception as exc:  # a tool bug must not crash the run; it is recorded instead
            return ToolOutcome(
                tool=self.name, input=raw, error=f"{type(exc).__name__}: {exc}", error_kind="internal",
                duration_s=time.perf_counter() - start,
            )

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass
