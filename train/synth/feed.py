"""Questions synthesized over what logged runs read, served as their own local web (`train --from-runs`).

The sources the runs read (runs.py) are the corpus: questions are synthesized from them (synthesize.py, reused for
an unchanged set of sources) and their rollouts search those sources (held-out ones left out), served on the local
web as a corpus file is. `refresh()` reads the trace store again (`--watch`: new runs bring new sources) and, when
the sources changed, synthesizes again and serves the new corpus. Replays of the logged questions keep their own
search set-ups (replay.py); `toolbox_for` sends each question where it belongs.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import SynthSettings
from ..rounds.questions import TrainQuestion, round_questions
from .corpus import SynthCorpus
from .runs import sources_from_runs
from .synthesize import SynthSet, synthesized

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.toolbox import Toolbox

MIN_SOURCES = 2  # fewer read sources give no corpus to speak of


class RunSourcesFeed:
    def __init__(self, tools: ToolSettings, store: TraceStore, settings: SynthSettings, root: Path,
                 announce: Callable[[str], None], since: datetime | None = None):
        self.tools, self.store, self.settings, self.root = tools, store, settings, root
        self.announce, self.since = announce, since
        self.set: SynthSet | None = None
        self.toolbox: Toolbox | None = None
        self._doc_id_for: Callable[[str], str | None] | None = None
        self._stack: AsyncExitStack | None = None
        self._served: Path | None = None

    async def refresh(self) -> bool:
        """Read the runs' sources again; synthesize and serve anew when they changed. True when they did."""
        from deepresearch.evals.run.environment import index_name_for
        from deepresearch.tools.index.registry import IndexRegistry

        from ..rounds.environment import rollout_environment

        docs = sources_from_runs(self.store, since=self.since)
        if len(docs) < MIN_SOURCES:
            return False
        corpus = SynthCorpus(docs)
        try:
            if self.set is not None and self.set.corpus == corpus.fingerprint():
                return False
            made, paths = synthesized(self.root, corpus, self.settings)
        finally:
            corpus.close()
        if not made.train_questions():
            return False
        old, self._served = self._served, paths.served
        await self._close_environment()
        if old is not None and old != paths.served:  # the previous sources' index: served no more
            registry = IndexRegistry(self.tools)
            try:
                registry.remove(index_name_for(old))
            finally:
                registry.close()
        self._stack = AsyncExitStack()
        env = await self._stack.enter_async_context(rollout_environment(self.tools, corpus=paths.served))
        self.toolbox, self._doc_id_for, self.set = env.toolbox, env.doc_id_for, made
        self.announce(f"from the {len(docs)} sources the logged runs read: {made.line()}")
        return True

    def questions(self, round_index: int, count: int, seed: int = 0) -> list[TrainQuestion]:
        """Round k's synthesized questions: a seeded slice of the current set's train split."""
        if self.set is None or count <= 0:
            return []
        return round_questions(self.set.train_questions(), round_index, count, seed)

    def owns(self, question: TrainQuestion) -> bool:
        return question.kind is not None and self.toolbox is not None

    def doc_id_for(self, url: str) -> str | None:
        return self._doc_id_for(url) if self._doc_id_for is not None else None

    def synthesized(self) -> dict[str, dict[str, int]]:
        return {"made": dict(self.set.stats.made), "kept": dict(self.set.stats.kept)} if self.set else {}

    async def _close_environment(self) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            self.toolbox = None
            await stack.aclose()

    async def close(self) -> None:
        await self._close_environment()
