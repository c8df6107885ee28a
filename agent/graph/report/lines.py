"""A sectioned report as the writer builds it: sections of lines (a written sentence, or an extractive report's
quote), each with the findings it cites and the verdict of its check. Findings are referred to by their place in
the report's list of findings (0-based); the numbers a reader sees are given when the report is rendered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ReportLine:
    text: str
    cites: list[int]  # the findings it cites
    supported: bool = False
    reason: str = ""  # why it failed the check ("" when supported)
    kept: list[int] = field(default_factory=list)  # the cited findings that passed their own check: shown
    failed: dict[int, str] = field(default_factory=dict)  # cited findings that did not, and why


@dataclass
class ReportSection:
    title: str
    lines: list[ReportLine] = field(default_factory=list)

    @property
    def shown(self) -> list[ReportLine]:
        return [line for line in self.lines if line.supported]


def line_payload(line: ReportLine, numbers: dict[int, int]) -> dict[str, Any]:
    """A line as the trace keeps it: its text, the numbers it is shown with, and its check."""
    return {"text": line.text, "cites": [numbers[i] for i in line.kept if i in numbers] if line.supported else [],
            "supported": line.supported, "reason": line.reason}
