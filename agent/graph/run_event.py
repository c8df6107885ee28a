"""The base of every typed event of a research run (events.py has the kinds and how they are read back)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

EventT = TypeVar("EventT", bound="RunEvent")


@dataclass(frozen=True)
class RunEvent:
    trace_kind: ClassVar[str | None] = None  # the trace event's kind; None = progress only
    streamed: ClassVar[bool] = False  # shown as progress (ask's live view, the TUI's log)

    def trace_payload(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} is not kept in the trace")

    @classmethod
    def from_trace(cls: type[EventT], payload: dict[str, Any]) -> EventT:
        raise NotImplementedError(f"{cls.__name__} is not kept in the trace")
