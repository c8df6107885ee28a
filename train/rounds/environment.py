"""The world rollouts run in: a corpus served as a real website on 127.0.0.1, and the agent's real tools.

Either a corpus file (indexed on first use under a content-derived name and reused after, exactly
as `deepresearch eval` does, so training and evaluation search the same index) or an existing local
index by name: the search tool talks to the local web's SearxNG-compatible API and the browser opens
its pages, so the agent behaves as it does on the internet. Questions people asked are replayed in the
search set-ups their own runs used instead (replay.py), one toolbox per set-up: `toolbox_for`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.toolbox import Toolbox

    from .questions import TrainQuestion


NO_MEMORY = "long-term memory is off in training rollouts (the runs of a group stay independent)"


@dataclass
class RolloutEnvironment:
    toolbox: Toolbox
    doc_id_for: Callable[[str], str | None]  # a cited URL → corpus doc id (for gold-citation rewards)
    web_url: str | None = None
    # The toolbox a question's rollouts use, when it is not `toolbox` for every question (replays).
    toolbox_for: Callable[[TrainQuestion], Toolbox] | None = None


@asynccontextmanager
async def rollout_environment(
    tools: ToolSettings, *, corpus: Path | None = None, index: str | None = None,
) -> AsyncIterator[RolloutEnvironment]:
    if (corpus is None) == (index is None):
        raise ValueError("give exactly one of a corpus file or an index name")
    if corpus is not None:
        from deepresearch.evals.data.dataset import load_corpus
        from deepresearch.evals.run.environment import eval_environment

        async with eval_environment(corpus, load_corpus(corpus), tools) as env:
            assert env is not None
            yield RolloutEnvironment(toolbox=env.toolbox, doc_id_for=env.doc_id_for)
        return

    from deepresearch.evals.run.environment import eval_tool_settings, local_web_doc_id, without_memory
    from deepresearch.tools.index.registry import IndexRegistry
    from deepresearch.tools.localweb.server import LocalWebServer, site_port
    from deepresearch.tools.toolbox import build_toolbox

    registry = IndexRegistry(tools)
    try:
        assert index is not None
        # IndexNotFound names the known indexes. A port of its own: the same URLs in every round and process.
        with LocalWebServer(registry.open(index), port=site_port(index)) as web:
            toolbox = build_toolbox(eval_tool_settings(tools, web.url))
            without_memory(toolbox, NO_MEMORY)
            try:
                yield RolloutEnvironment(toolbox=toolbox, doc_id_for=lambda url: local_web_doc_id(url, web.url),
                                         web_url=web.url)
            finally:
                await toolbox.close()
    finally:
        registry.close()

