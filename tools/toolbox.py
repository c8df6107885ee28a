"""The toolbox the agent graph holds: every tool by name, one `invoke`, and source text for citations.

    toolbox = build_toolbox(settings.tools, offline=True, index="pool")
    outcome = await toolbox.invoke("search", {"query": "Who founded ..."})
    text = toolbox.source_text(outcome.output["hits"][0]["url"])   # for the citation checker
    await toolbox.close()
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from deepresearch.tools.base import Tool, ToolOutcome
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.config import ToolSettings
from deepresearch.tools.files import ReadFileTool
from deepresearch.tools.index.local_index import LocalIndex
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.local_urls import parse_local_url
from deepresearch.tools.memory.store import MemoryStore
from deepresearch.tools.memory.tool import RecallTool, RememberTool
from deepresearch.tools.sandbox.tool import PythonTool
from deepresearch.tools.search.cache import SearchCache
from deepresearch.tools.search.tool import SearchTool

if TYPE_CHECKING:
    from deepresearch.tools.embedding import Embedder


class Toolbox:
    def __init__(
        self, tools: list[Tool], *, registry: IndexRegistry, local_indexes: list[LocalIndex],
        unavailable: dict[str, str] | None = None, offline: bool = False, local_web_url: str | None = None,
        cache: SearchCache | None = None, embed: Callable[[list[str]], list[list[float]]] | None = None,
    ):
        self._tools = {tool.name: tool for tool in tools}
        # Sentence embeddings (tools/embedding.py) for the writer's last-hop likeness; None: not available here.
        self.embed = embed
        self.registry = registry
        self.local_indexes = local_indexes
        self.unavailable = dict(unavailable or {})
        self.offline = offline
        self.local_web_url = local_web_url.rstrip("/") if local_web_url else None
        self._cache = cache

    # --- lookup -----------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Tools that can run here (a disabled tool is left out; `unavailable` says why)."""
        return [name for name in self._tools if name not in self.unavailable]

    def plannable(self) -> list[str]:
        """Tools offered to the planner and the executors, in registration order."""
        return [name for name in self.names() if self._tools[name].plannable]

    def find(self, name: str) -> Tool | None:
        """The tool registered under `name` (available or not), or None."""
        return self._tools.get(name)

    def get(self, name: str) -> Tool:
        if name not in self._tools:
            raise KeyError(f"no tool named {name!r} (tools: {', '.join(self._tools)})")
        return self._tools[name]

    def describe(self) -> list[dict[str, Any]]:
        """Name, description and input JSON schema of each available tool (for prompts and grammars)."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_model.model_json_schema()}
            for t in self._tools.values() if t.name not in self.unavailable
        ]

    async def invoke(self, name: str, raw_args: dict[str, Any]) -> ToolOutcome:
        """Run a tool by name; never raises (unknown or disabled tools come back as an error outcome)."""
        if name not in self._tools:
            return ToolOutcome(
                tool=name, input=raw_args, error=f"unknown tool {name!r}; tools: {', '.join(self.names())}",
                error_kind="unknown_tool",
            )
        if name in self.unavailable:
            return ToolOutcome(tool=name, input=raw_args, error=self.unavailable[name], error_kind="unavailable")
        return await self._tools[name].invoke(raw_args if isinstance(raw_args, dict) else {"value": raw_args})

    # --- source text for the citation checker -----------------------------------------------------

    def _index_text(self, doc_id: str, index_name: str | None = None) -> str | None:
        indexes = [self.registry.open(index_name)] if index_name else self.local_indexes
        for index in indexes:
            doc = index.get(doc_id)
            if doc is not None:
                return doc.text
        return None

    def source_text(self, url_or_doc_id: str) -> str | None:
        """Full text of a source seen in this toolbox: an opened page, a local document, a read file."""
        key = url_or_doc_id.strip()
        # A document of the local web (an eval's or a training run's stand-in for the web) is read as its index
        # holds it, as a local:// one is: its page (one paragraph a line) loses the blank lines between paragraphs,
        # so a note's title, its heading underline and the fields under them would read as one unit.
        if self.local_web_url and key.startswith(self.local_web_url + "/doc/"):
            return self._index_text(unquote(urlsplit(key).path[len("/doc/"):]))
        browser = self._tools.get("open")
        if isinstance(browser, BrowserTool) and (page := browser.cached(key)) is not None:
            return page.text
        local = parse_local_url(key)
        if local is not None:
            try:
                return self._index_text(local[1], local[0])
            except (LookupError, ValueError):
                return None
        files = self._tools.get("read_file")
        if isinstance(files, ReadFileTool) and key in files.texts:
            return files.texts[key]
        if "://" not in key:
            return self._index_text(key)
        return None

    # --- lifetime ---------------------------------------------------------------------------------

    async def close(self) -> None:
        for tool in self._tools.values():
            await tool.close()
        if self._cache is not None:
            self._cache.close()
        self.registry.close()

    async def __aenter__(self) -> Toolbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _local_indexes(registry: IndexRegistry, settings: ToolSettings, index: str | None) -> list[LocalIndex]:
    """The named index, else the configured list, else every index there is."""
    names = [index] if index else (settings.search.local_indexes or registry.names())
    return [registry.open(name) for name in names]  # a missing named index raises IndexNotFound


def build_toolbox(
    settings: ToolSettings, *, offline: bool = False, index: str | None = None, searxng_url: str | None = None,
) -> Toolbox:
    """Every tool, wired from settings. `offline` drops internet backends and non-allow-listed hosts;
    `searxng_url` (e.g. a LocalWebServer) is used for search and allow-listed for the browser.
    Raises IndexNotFound (a LookupError) when `index` names no existing index."""
    registry = IndexRegistry(settings)
    local_indexes = _local_indexes(registry, settings, index)
    cache = (
        SearchCache(settings.search_cache_path, ttl_s=settings.search.cache_ttl_s,
                    max_entries=settings.search.cache_max_entries)
        if settings.search.cache else None
    )
    browser_settings = settings.browser
    if searxng_url:
        netloc = urlsplit(searxng_url).netloc
        browser_settings = browser_settings.model_copy(update={"allow_hosts": [*browser_settings.allow_hosts, netloc]})
    search = SearchTool.from_settings(
        settings.search, local_indexes=local_indexes, searxng_url=searxng_url, offline=offline, cache=cache
    )

    @functools.cache
    def embedder() -> Embedder:  # loaded on first use, by memory or by the writer's last hop
        from deepresearch.tools.embedding import Embedder

        return Embedder(settings.embedding.model_dir, max_chars=settings.embedding.max_chars)

    @functools.cache
    def memory_store() -> MemoryStore:
        return MemoryStore(settings.memory_dir, embedder(), settings.memory.collection)

    def recall_indexes() -> list[LocalIndex]:
        names = settings.memory.recall_indexes or registry.names()
        return [registry.open(name) for name in names if registry.exists(name)]

    python = PythonTool(settings.sandbox)
    files = ReadFileTool(settings.files)
    unavailable: dict[str, str] = {}
    if reason := python.unavailable_reason():
        unavailable["python"] = reason
    if not files.roots:
        unavailable["read_file"] = "read_file has no allowed folders (set tools.files.allowed_roots)"
    if not search.backend_names:
        unavailable["search"] = "no search backend is configured (set a SearxNG URL or build a local index)"
    # The registration: every tool, in the order the model is offered them.
    tools: list[Tool] = [
        search,
        BrowserTool(browser_settings, registry=registry, offline=offline),
        python,
        RememberTool(memory_store, settings.memory),
        RecallTool(memory_store, settings.memory, recall_indexes),
        files,
    ]
    return Toolbox(
        tools, registry=registry, local_indexes=local_indexes, unavailable=unavailable, offline=offline,
        local_web_url=searxng_url, cache=cache, embed=lambda texts: embedder().embed(texts),
    )
