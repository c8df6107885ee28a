"""The small interface every tool implements, so the graph, the trace and the trainer treat them alike.

A tool has a name, a one-line description for the model, a pydantic input schema the model fills
(kept small and flat so a 135M model can fill it under a grammar), and an async `run` that returns
a typed result or raises `ToolFailure` with a kind the caller can act on.
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


class Tool(ABC, Generic[InputT, OutputT]):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]

    @abstractmethod
    async def run(self, args: InputT) -> OutputT: ...

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
