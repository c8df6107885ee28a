"""A person's rating of a run, the same from the CLI, the TUI and the HTTP API.

A rating is kept for training (`deepresearch train --from-runs`). A negative one also takes back what the run
put into long-term memory: a run rated as wrong must not come back as a "note from earlier research" in the next
question's plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings


def record_feedback(store: TraceStore, tools: ToolSettings, run_id: str, score: float,
                    comment: str | None = None) -> int:
    """Keep the rating; for a negative score forget the run's memories. Returns how many were forgotten."""
    store.add_feedback(run_id, score, comment)
    if score >= 0 or not tools.memory_dir.is_dir():
        return 0
    from deepresearch.tools.memory.store import MemoryStore

    return MemoryStore(tools.memory_dir, None, tools.memory.collection).forget_run(run_id)
