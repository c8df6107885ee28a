"""What a run's event stream carries: the graph's own typed events (agent/graph/events.py), serialised by
their types, plus the two the service adds (a plan waiting for review, the run's result).

An event travels as (name, JSON): the name is the event's class name and the JSON is its fields (a graph
event is a dataclass of plain values and TypedDicts), so a client reads it back into the same type with
`decode(name, data)`. (pydantic cannot build a schema from `typing.TypedDict` on Python 3.11, hence
`dataclasses.asdict` for the graph's events.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from deepresearch.agent.graph import events as graph_events
from deepresearch.agent.graph.events import RunEvent, event_of
from deepresearch.agent.graph.run import ResearchResult
from pydantic import BaseModel


class ApprovalRequested(BaseModel):
    """The run waits for POST /runs/{id}/plan (accept, edit or reject these steps)."""

    steps: list[dict[str, Any]]  # the pending PlanSteps: id, goal, tool, query, done_when, status, round


class RunFinished(ResearchResult):
    """The run ended (any status); the report is at GET /runs/{id}/report. Always the last event."""


# Every progress event a run streams (the ones `ask` and the TUI show), by name.
STREAMED: dict[str, type[RunEvent]] = {
    cls.__name__: cls for cls in vars(graph_events).values()
    if isinstance(cls, type) and issubclass(cls, RunEvent) and cls is not RunEvent and cls.streamed
}
SERVICE: dict[str, type[BaseModel]] = {"ApprovalRequested": ApprovalRequested, "RunFinished": RunFinished}


def encode(event: RunEvent | BaseModel) -> tuple[str, dict[str, Any]]:
    """(name, JSON-ready data) of a graph event or a service event."""
    name = type(event).__name__
    if isinstance(event, BaseModel):
        return name, event.model_dump(mode="json")
    return name, dataclasses.asdict(event)


def decode(name: str, data: dict[str, Any]) -> RunEvent | BaseModel:
    """The typed event back from (name, data), as a client of the stream reads it."""
    if name in SERVICE:
        return SERVICE[name].model_validate(data)
    if name not in STREAMED:
        raise ValueError(f"unknown event {name!r}")
    cls = STREAMED[name]
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def stored_events(store: Any, run_id: str) -> list[RunEvent]:
    """A run's progress events as its trace kept them (a run this server did not start, or started
    before a restart): the streamed kinds the trace holds, in order; progress-only kinds are not kept."""
    kept = []
    for stored in store.events(run_id):
        event = event_of(stored.kind, stored.payload)
        if event is not None and type(event).streamed:
            kept.append(event)
    return kept
