"""Shared fixtures for the tools tests: real servers, a session-wide pool-corpus index, fresh settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from deepresearch.tools.config import ToolSettings  # noqa: E402
from deepresearch.tools.index.build import index_paths  # noqa: E402
from deepresearch.tools.index.local_index import LocalIndex  # noqa: E402
from deepresearch.tools.index.registry import IndexRegistry  # noqa: E402

from . import servers  # noqa: E402

DATA = Path("/work/shared/data")
POOL_CORPUS = DATA / "pool" / "corpus.jsonl"
POOL_QUESTIONS = DATA / "pool" / "questions.jsonl"
PAGES = DATA / "pages"


def fresh_settings(data_dir: Path, **updates: object) -> ToolSettings:
    """Settings for a test: its own data dir, no search cache unless asked, no pacing."""
    settings = ToolSettings(data_dir=data_dir)
    settings.search.cache = False
    settings.search.min_interval_s = {}
    for key, value in updates.items():
        section, _, field = key.partition("__")
        setattr(getattr(settings, section), field, value)
    return settings


@pytest.fixture
def settings(tmp_path: Path) -> ToolSettings:
    return fresh_settings(tmp_path)


@pytest.fixture(scope="session")
def pool_settings(tmp_path_factory: pytest.TempPathFactory) -> ToolSettings:
    """A data dir holding the 18,341-document pool corpus as index 'pool' (built once per session)."""
    settings = fresh_settings(tmp_path_factory.mktemp("pool-data"))
    registry = IndexRegistry(settings)
    try:
        index_paths(registry, "pool", [POOL_CORPUS])
    finally:
        registry.close()
    return settings


@pytest.fixture(scope="session")
def pool_registry(pool_settings: ToolSettings) -> Iterator[IndexRegistry]:
    registry = IndexRegistry(pool_settings)
    yield registry
    registry.close()


@pytest.fixture(scope="session")
def pool_index(pool_registry: IndexRegistry) -> LocalIndex:
    return pool_registry.open("pool")


@pytest.fixture(scope="session")
def pages_server() -> Iterator[servers.ThreadingHTTPServer]:
    server = servers.static_server(PAGES)
    thread = servers.start(server)
    yield server
    servers.stop(server, thread)


def pages_base(server: servers.ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"
