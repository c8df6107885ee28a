"""The sources people's runs read, as a corpus to synthesize questions from (`train --from-runs`).

Every tool call's output is in the trace store; a page the browser opened (`open`) and a file `read_file` read
carry their full text. Those of the runs people made (not training rollouts, not eval runs) are the user's own
domain: questions synthesized over them train the model on what its users look things up in. A source read by
several runs counts once (its newest text); the id is the address it was read at.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..rounds.questions import EVAL_TAG, TRAIN_TAG
from .corpus import SynthDoc

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

READING_TOOLS = ("open", "read_file")
MIN_CHARS = 80  # shorter pages (an error page, an empty shell) give no facts worth a question


def sources_from_runs(store: TraceStore, since: datetime | None = None, limit: int | None = None) -> list[SynthDoc]:
    """The documents the logged runs read in full, newest first; at most `limit` of them."""
    docs: dict[str, SynthDoc] = {}
    for run in store.list_runs(limit=None, since=since):
        if TRAIN_TAG in run.tags or EVAL_TAG in run.tags:
            continue
        for event in store.iter_events(run.id, kind="tool"):
            payload = event.payload
            output = payload.get("output") or {}
            if payload.get("tool") not in READING_TOOLS or not isinstance(output, dict):
                continue
            text = output.get("text")
            address = output.get("final_url") or output.get("url") or output.get("path")
            if not isinstance(text, str) or len(text) < MIN_CHARS or not isinstance(address, str):
                continue
            if address not in docs:
                docs[address] = SynthDoc(address, str(output.get("title") or ""), text)
        if limit is not None and len(docs) >= limit:
            break
    return list(docs.values())[:limit] if limit is not None else list(docs.values())
