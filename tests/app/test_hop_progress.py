"""A skipped follow-up hop is said where progress is shown (ask, the TUI, MCP) and kept in the trace."""

from __future__ import annotations

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.graph.events import HopSkipped, event_of
from deepresearch.app.progress import ResearchProgress
from deepresearch.app.service.events import decode, encode
from deepresearch.app.service.mcp_server import progress_message
from deepresearch.app.tui.render import describe
from rich.console import Console


def test_a_skipped_hop_is_one_line_everywhere_and_survives_the_trace():
    event = HopSkipped(answer="10 December 1815", confidence=0.4213)
    assert "no follow-up search" in describe(event) and "0.42" in describe(event)
    assert "'10 December 1815'" in progress_message(*encode(event))
    assert decode(*encode(event)) == event
    assert event_of(event.trace_kind, event.trace_payload()) == event
    console = Console(record=True, width=120)
    ResearchProgress(console, BudgetSettings())(event)
    assert "no follow-up search" in console.export_text()
