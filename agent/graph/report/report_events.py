"""The sectioned report's event: its sections and every line's check, as the trace keeps them (the evals' report
metrics read it: evals/run/graph_system.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..run_event import RunEvent


@dataclass(frozen=True)
class ReportChecked(RunEvent):
    """`sections`: [{title, lines: [{text, cites (the numbers shown), supported, reason}]}]. `lines`: the written
    sentences (or quotes) checked, `supported` of them shown, `dropped` removed (written) or left out
    (extractive); `supported_citations`: the verified citations the shown lines carry; `fallback`: why a written
    report gave way to this extractive one ("" when it did not); `written`: then, the sections the model wrote, each
    sentence with the reason the check removed it (as `sections` gives them)."""

    trace_kind: ClassVar[str | None] = "report_check"
    style: str
    kind: str
    sections: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    supported: int = 0
    dropped: int = 0
    supported_citations: int = 0
    fallback: str = ""
    written: list[dict[str, Any]] = field(default_factory=list)

    def trace_payload(self) -> dict[str, Any]:
        return {"style": self.style, "kind": self.kind, "sections": self.sections, "lines": self.lines,
                "supported": self.supported, "dropped": self.dropped,
                "supported_citations": self.supported_citations, "fallback": self.fallback, "written": self.written}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> ReportChecked:
        return cls(style=str(payload.get("style", "")), kind=str(payload.get("kind", "")),
                   sections=list(payload.get("sections") or []), lines=int(payload.get("lines", 0)),
                   supported=int(payload.get("supported", 0)), dropped=int(payload.get("dropped", 0)),
                   supported_citations=int(payload.get("supported_citations", 0)),
                   fallback=str(payload.get("fallback", "")), written=list(payload.get("written") or []))
