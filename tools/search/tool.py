"""The `search` tool and the construction of its backend chain from settings."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from deepresearch.tools.base import Surfaced, Tool, ToolFailure
from deepresearch.tools.config import SearchSettings
from deepresearch.tools.index.local_index import LocalIndex
from deepresearch.tools.search.backends.base import SearchBackend
from deepresearch.tools.search.backends.brave import BraveBackend
from deepresearch.tools.search.backends.ddg import DdgBackend
from deepresearch.tools.search.backends.local import LocalBackend
from deepresearch.tools.search.backends.searxng import SearxngBackend
from deepresearch.tools.search.backends.tavily import TavilyBackend
from deepresearch.tools.search.cache import SearchCache
from deepresearch.tools.search.chain import FallbackChain
from deepresearch.tools.search.ratelimit import BackendPacer
from deepresearch.tools.search.types import SearchInput, SearchOutput

ONLINE_BACKENDS = frozenset({"ddg", "tavily", "brave"})


def build_backends(
    settings: SearchSettings, client: httpx.AsyncClient, *, local_indexes: list[LocalIndex],
    searxng_url: str | None, offline: bool,
) -> list[SearchBackend]:
    """The configured chain, in order, leaving out backends that cannot run (no URL, no key, offline)."""
    backends: list[SearchBackend] = []
    for name in dict.fromkeys(settings.backends):
        if offline and name in ONLINE_BACKENDS:
            continue
        if name == "searxng":
            # Offline, only an explicitly given SearxNG (e.g. the local web) is used, never a configured remote.
            url = searxng_url or (None if offline else settings.searxng_url)
            if url:
                backends.append(SearxngBackend(url, client))
        elif name == "ddg":
            backends.append(DdgBackend(settings.timeout_s, settings.ddg_backend))
        elif name == "tavily" and settings.tavily_api_key:
            backends.append(TavilyBackend(settings.tavily_api_key.get_secret_value(), settings.tavily_url, client))
        elif name == "brave" and settings.brave_api_key:
            backends.append(BraveBackend(settings.brave_api_key.get_secret_value(), settings.brave_url, client))
        elif name == "local" and local_indexes:
            backends.append(LocalBackend(local_indexes))
    return backends


class SearchTool(Tool[SearchInput, SearchOutput]):
    name: ClassVar[str] = "search"
    description: ClassVar[str] = "Search the web and local indexes; returns titles, URLs and snippets."
    input_model: ClassVar[type[SearchInput]] = SearchInput
    plannable: ClassVar[bool] = True

    def __init__(self, chain: FallbackChain, client: httpx.AsyncClient | None = None):
        self.chain = chain
        self._client = client

    @classmethod
    def from_settings(
        cls, settings: SearchSettings, *, local_indexes: list[LocalIndex], searxng_url: str | None = None,
        offline: bool = False, cache: SearchCache | None = None,
    ) -> SearchTool:
        client = httpx.AsyncClient(timeout=settings.timeout_s, follow_redirects=True)
        backends = build_backends(
            settings, client, local_indexes=local_indexes, searxng_url=searxng_url, offline=offline
        )
        chain = FallbackChain(
            backends, pacer=BackendPacer(settings.min_interval_s, settings.cooldown_s), cache=cache,
            max_results=settings.max_results, fallback_on_empty=settings.fallback_on_empty,
        )
        return cls(chain, client)

    @property
    def backend_names(self) -> list[str]:
        return [b.name for b in self.chain.backends]

    def observe(self, value: str, output: dict[str, Any]) -> str:
        hits = output.get("hits", [])
        head = f"{self.name}({value!r}) → {len(hits)} results"
        if not hits:
            return head
        # Titles and addresses are what the pages' authors wrote: the executor fences the observation.
        lines = [f"  {h.get('title', '')} — {h.get('url', '')}" for h in hits[:5]]
        return head + "\n" + "\n".join(lines)

    def sources(self, output: dict[str, Any]) -> list[Surfaced]:
        """The hits, in rank order: pages to open."""
        return [Surfaced(url=h["url"], title=h.get("title", ""), doc_id=h.get("doc_id"))
                for h in output.get("hits", []) if h.get("url")]

    def caveat(self, output: dict[str, Any]) -> str | None:
        """Which backends failed before the one that answered (by kind: the messages are in the trace)."""
        failed = [f"{a['backend']} ({a.get('error_kind') or a['status']})" for a in output.get("attempts", [])
                  if a.get("status") in ("error", "skipped")]
        if not failed:
            return None
        answered = output.get("backend")
        by = "the local index" if answered == "local" else answered
        return f"backend{'s' if len(failed) > 1 else ''} {', '.join(failed)} failed; answered by {by}"

    async def run(self, args: SearchInput) -> SearchOutput:
        if not self.chain.backends:
            raise ToolFailure(
                "unavailable", "no search backend is configured (set a SearxNG URL or build a local index)"
            )
        output = await self.chain.search(args.query)
        if output.backend is None:
            summary = "; ".join(f"{a.backend}: {a.error_kind} ({a.error})" for a in output.attempts)
            raise ToolFailure("search_failed", f"every backend failed: {summary}")
        return output

    async def close(self) -> None:
        await self.chain.close()
        if self._client is not None:
            await self._client.aclose()
