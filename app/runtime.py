"""The composition root: settings in, a ready model + toolbox + trace store out, closed together."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepresearch.agent.trace.store import TraceStore

from .settings import Settings

if TYPE_CHECKING:
    from deepresearch.agent.graph.run import ResearchRuntime
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.tools.toolbox import Toolbox
    from deepresearch.train.adapters.registry import AdapterRegistry

DEMO_INDEX = "demo"


def demo_file(name: str) -> Path:
    return Path(str(resources.files("deepresearch").joinpath("demo", name)))


def ensure_index(settings: Settings, name: str) -> None:
    """The shipped demo corpus is indexed on first use; any other index must have been built by the user."""
    from deepresearch.tools.index.ingest import Ingest
    from deepresearch.tools.index.registry import IndexRegistry

    registry = IndexRegistry(settings.tools)
    try:
        if name == DEMO_INDEX:
            corpus = demo_file("corpus.jsonl")
            index = registry.open(name, create=True)
            with corpus.open(encoding="utf-8") as lines:
                shipped = sum(1 for line in lines if line.strip())
            # First use, or a release that grew the demo: (re)sync the index with the shipped corpus.
            if index.info().documents != shipped:
                index.add(Ingest(corpus, max_file_bytes=settings.tools.index.max_file_bytes), source=str(corpus))
        else:
            registry.open(name)  # raises IndexNotFound with the list of known indexes
    finally:
        registry.close()


def quiet_libraries() -> None:
    """Offline always: no hub downloads, no telemetry; thread waits that do not burn the 2nd core."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@dataclass
class AgentRuntime:
    settings: Settings
    store: TraceStore
    model: ChatModel
    toolbox: Toolbox
    offline: bool = False
    index: str | None = None

    def research_runtime(self) -> ResearchRuntime:
        from deepresearch.agent.graph.run import ResearchRuntime

        return ResearchRuntime(model=self.model, toolbox=self.toolbox, store=self.store, settings=self.settings.agent)

    def snapshot(self) -> dict[str, Any]:
        """The settings a run records, plus how this command searches (`train --from-runs` replays alike).
        Every key setting is a SecretStr: the JSON dump masks it, so the trace never holds one."""
        return {**self.settings.model_dump(mode="json"), "run": {"offline": self.offline, "index": self.index}}


def adapter_registry(settings: Settings) -> AdapterRegistry:
    """The adapter registry of the data directory; on a fresh one (no registry yet) the starter adapter is
    installed and served first, when the configured model is the one it was trained on (train/adapters/starter.py)."""
    from deepresearch.agent.config import EMBEDDED_MODEL_NAME
    from deepresearch.train.adapters.registry import AdapterRegistry
    from deepresearch.train.adapters.starter import install_starter

    if settings.model.starter_adapter and settings.model.name == EMBEDDED_MODEL_NAME:
        install_starter(settings.paths.adapters)
    return AdapterRegistry(settings.paths.adapters)


def with_served_adapter(settings: Settings) -> Settings:
    """Unless an adapter is named, answer with the one the trainer last published (the closed loop), or on a
    fresh data directory the starter adapter."""
    if settings.model.adapter is not None:
        return settings
    name = adapter_registry(settings).current
    if name is None:
        return settings
    return settings.model_copy(update={"model": settings.model.model_copy(update={"adapter": name})})


def answering_policy(settings: Settings) -> RunPolicy:
    """How `ask` and the TUI decode: the configured adapter (scoped to the roles its metadata names) or,
    with none configured, whatever the model serves; the configured temperature and completion cap."""
    from deepresearch.agent.model.policy import AdapterChoice, RunPolicy

    name = settings.model.adapter
    if name is None:
        adapter = AdapterChoice.active()
    elif not name:  # an explicit empty name asks for the base model
        adapter = AdapterChoice.base()
    else:
        from deepresearch.train.adapters.registry import adapter_choice

        adapter = adapter_choice(name, settings.paths.adapters / name)
    return RunPolicy(adapter=adapter, temperature=settings.model.temperature, max_tokens=settings.model.max_tokens)


def build_model_from(settings: Settings) -> ChatModel:
    from deepresearch.agent.model.factory import build_model

    return build_model(settings.model, cache_dir=settings.cache_dir, adapters_dir=settings.paths.adapters)


@asynccontextmanager
async def open_runtime(
    settings: Settings, *, offline: bool = False, index: str | None = None, model: ChatModel | None = None,
) -> AsyncIterator[AgentRuntime]:
    """Model, tools and trace store for one command; everything opened here is closed here."""
    from deepresearch.tools.toolbox import build_toolbox

    quiet_libraries()
    index = index or settings.index
    # The trace store first: a damaged one is reported before minutes go into indexing or loading a model.
    store = TraceStore(settings.paths.traces_db)
    try:
        ensure_index(settings, index)
        own_model = model is None
        chat_model = model or build_model_from(settings)
        try:
            toolbox = build_toolbox(settings.tools, offline=offline, index=index)
            try:
                yield AgentRuntime(settings=settings, store=store, model=chat_model, toolbox=toolbox,
                                   offline=offline, index=index)
            finally:
                await toolbox.close()
        finally:
            if own_model:
                await chat_model.close()
    finally:
        store.close()
