"""The search set-ups logged questions are replayed in: each question searches the way its own run did.

A run's settings snapshot records its search chain (the SearxNG URL, the fallback backends, the local
index) and whether it was `ask --offline` (SearchSource, questions.py). A question's replays use a
toolbox built the way `ask` builds one for that set-up — `build_toolbox(tools, offline=…, index=…)` — so
a web question searches SearxNG first when its run had one, then the rest of its chain, and an offline
question searches its local index only, seeing the same `local://index/doc` URLs its run saw. Questions
whose runs recorded no search settings (older runs) use today's settings. API keys are never in a
snapshot (they are masked): they come from today's settings, and a backend the run used that today's
settings cannot run (no key, no URL) is named when its set-up is announced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, get_args

from .environment import NO_MEMORY, RolloutEnvironment
from .questions import SearchSource, TrainQuestion

if TYPE_CHECKING:
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.toolbox import Toolbox


def replay_source(source: SearchSource, default_index: str) -> SearchSource:
    """`source` limited to the backends this version knows (local when none is left), on its run's index
    or, when the run recorded none, the default one."""
    from deepresearch.tools.config import BackendName

    backends = [b for b in source.backends if b in get_args(BackendName)] or ["local"]
    return source.model_copy(update={"index": source.index or default_index, "backends": backends})


class ReplayToolboxes:
    """One toolbox per search set-up the replayed questions' runs used, built on first use (a `--watch`
    round can bring a new one) and closed together. `prepare_index(name)` makes sure an index exists
    (IndexNotFound, a LookupError, if it cannot); `announce(line)` tells the user how each set-up searches."""

    def __init__(self, tools: ToolSettings, today: SearchSource, default_index: str,
                 prepare_index: Callable[[str], None], announce: Callable[[str], None]) -> None:
        self.tools = tools
        self.today = replay_source(today, default_index)
        self.default_index = default_index
        self.prepare_index = prepare_index
        self.announce = announce
        self.default = self.today  # the set-up most questions use: `plan` sets it
        self._planned: set[str] = set()
        self._toolboxes: dict[str, Toolbox] = {}

    def source_for(self, question: TrainQuestion) -> SearchSource:
        return self.today if question.search is None else replay_source(question.search, self.default_index)

    def plan(self, items: list[TrainQuestion]) -> None:
        """Check and announce every set-up these questions use, the most common first (it becomes the
        default); nothing is opened yet, so a missing index fails before any model loads."""
        counts = Counter((self.source_for(q).model_dump_json(), q.search is None) for q in items)
        for (key, recorded_none), n in counts.most_common():
            how = "with today's settings (their runs recorded none)" if recorded_none else "as their runs did"
            self._prepare(SearchSource.model_validate_json(key), f"{n} question(s) {how}")
        if counts:
            self.default = SearchSource.model_validate_json(counts.most_common(1)[0][0][0])

    def toolbox_for(self, question: TrainQuestion) -> Toolbox:
        source = self.source_for(question)
        try:
            self._prepare(source, "a new question as its run did")
        except LookupError as exc:  # e.g. its index was deleted since: a watch keeps training
            self.announce(f"cannot replay {question.question[:60]!r} as its run searched ({exc}): today's "
                          "settings instead")
            source = self.today
        return self.toolbox(source)

    def toolbox(self, source: SearchSource) -> Toolbox:
        from deepresearch.evals.run.environment import without_memory
        from deepresearch.tools.toolbox import build_toolbox

        key = source.model_dump_json()
        if key not in self._toolboxes:
            assert source.index is not None  # replay_source filled it in
            if source.offline:  # `ask --offline`: the local index only, internet backends and hosts off
                toolbox = build_toolbox(self.tools, offline=True, index=source.index)
            else:
                search = self.tools.search.model_copy(update={"backends": source.backends,
                                                              "searxng_url": source.searxng_url})
                toolbox = build_toolbox(self.tools.model_copy(update={"search": search}), index=source.index)
            without_memory(toolbox, NO_MEMORY)
            self._toolboxes[key] = toolbox
        return self._toolboxes[key]

    def _prepare(self, source: SearchSource, who: str) -> None:
        key = source.model_dump_json()
        if key in self._planned:
            return
        assert source.index is not None
        self.prepare_index(source.index)
        self._planned.add(key)
        self.announce(f"rollouts of {who}: {source.describe()}{self._skipped(source)}")

    def _skipped(self, source: SearchSource) -> str:
        """Backends the runs used that today's settings cannot run: API keys are not in a snapshot."""
        keys = {"tavily": self.tools.search.tavily_api_key, "brave": self.tools.search.brave_api_key}
        missing = [b for b in source.backends if b in keys and not keys[b] and not source.offline]
        return f" (no API key in today's settings, skipped: {', '.join(missing)})" if missing else ""

    async def close(self) -> None:
        toolboxes, self._toolboxes = list(self._toolboxes.values()), {}
        for toolbox in toolboxes:
            await toolbox.close()


@asynccontextmanager
async def replay_environment(replay: ReplayToolboxes) -> AsyncIterator[RolloutEnvironment]:
    """Rollouts of logged questions, each in its own run's search set-up; the toolboxes close on exit."""
    try:
        from deepresearch.tools.local_urls import local_doc_id

        # Only the local backend's results (local://index/doc) have corpus ids.
        yield RolloutEnvironment(toolbox=replay.toolbox(replay.default), doc_id_for=local_doc_id,
                                 toolbox_for=replay.toolbox_for)
    finally:
        await replay.close()
