"""Try backends in order: a 429, timeout, network error (or, if configured, no hits) moves to the next.

Every attempt is recorded so the trace shows the path a query took.
"""

from __future__ import annotations

import time

from deepresearch.tools.search.backends.base import SearchBackend
from deepresearch.tools.search.cache import SearchCache
from deepresearch.tools.search.normalise import dedupe_hits
from deepresearch.tools.search.ratelimit import BackendPacer
from deepresearch.tools.search.types import BackendAttempt, BackendFailure, SearchOutput


class FallbackChain:
    def __init__(
        self, backends: list[SearchBackend], *, pacer: BackendPacer, cache: SearchCache | None,
        max_results: int, fallback_on_empty: bool,
    ):
        self.backends = backends
        self.pacer = pacer
        self.cache = cache
        self.max_results = max_results
        self.fallback_on_empty = fallback_on_empty

    async def search(self, query: str) -> SearchOutput:
        attempts: list[BackendAttempt] = []
        last_empty: SearchOutput | None = None
        for backend in self.backends:
            cooling = self.pacer.cooling_for(backend.name)
            if cooling > 0:
                attempts.append(BackendAttempt(
                    backend=backend.name, status="skipped", error_kind="cooling_down",
                    error=f"rate limited earlier; skipped for another {cooling:.0f}s",
                ))
                continue
            start = time.perf_counter()
            cached = self.cache.get(backend.name, query, self.max_results) if self._cacheable(backend) else None
            if cached is not None:
                hits = cached
            else:
                try:
                    await self.pacer.wait_turn(backend.name)
                    hits = dedupe_hits(await backend.search(query, self.max_results), self.max_results)
                except BackendFailure as exc:
                    if exc.kind == "rate_limited":
                        self.pacer.cool_down(backend.name, exc.retry_after_s)
                    attempts.append(BackendAttempt(
                        backend=backend.name, status="error", error_kind=exc.kind, error=exc.message,
                        duration_s=time.perf_counter() - start,
                    ))
                    continue
                except TimeoutError:
                    attempts.append(BackendAttempt(
                        backend=backend.name, status="error", error_kind="timeout", error="timed out",
                        duration_s=time.perf_counter() - start,
                    ))
                    continue
                if hits and self._cacheable(backend):
                    self.cache.put(backend.name, query, self.max_results, hits)  # type: ignore[union-attr]
            attempts.append(BackendAttempt(
                backend=backend.name, status="ok" if hits else "empty", hits=len(hits), cached=cached is not None,
                duration_s=time.perf_counter() - start,
            ))
            output = SearchOutput(query=query, backend=backend.name, hits=hits, attempts=attempts)
            if hits or not self.fallback_on_empty:
                return output
            last_empty = output
        if last_empty is not None:
            return last_empty.model_copy(update={"attempts": attempts})
        return SearchOutput(query=query, backend=None, hits=[], attempts=attempts)

    def _cacheable(self, backend: SearchBackend) -> bool:
        return self.cache is not None and backend.cacheable

    async def close(self) -> None:
        for backend in self.backends:
            await backend.close()
