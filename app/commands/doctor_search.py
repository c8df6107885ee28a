"""`doctor`'s search line: every backend in `tools.search.backends`, probed with the code a run uses.

A backend the chain skips (SearxNG without a URL, Tavily/Brave without a key) is named as skipped;
a configured one that fails its probe is a warning (the chain falls back); no usable backend at all is
a failure.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..settings import Settings

Status = Literal["ok", "warn", "fail"]
Check = tuple[Status, str, str]  # status, what was found, the fix when not ok
PROBE_QUERY = "Analytical Engine"
PROBE_TIMEOUT_S = 8.0


async def _probe_web(name: str, s: Settings) -> str | None:
    """None if the backend answered a query, else why not."""
    import httpx
    from deepresearch.tools.search.backends.ddg import DdgBackend
    from deepresearch.tools.search.backends.searxng import SearxngBackend
    from deepresearch.tools.search.types import BackendFailure

    timeout = min(s.tools.search.timeout_s, PROBE_TIMEOUT_S)
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        backend = SearxngBackend(str(s.tools.search.searxng_url), client) if name == "searxng" \
            else DdgBackend(timeout, s.tools.search.ddg_backend)
        try:
            await asyncio.wait_for(backend.search(PROBE_QUERY, 1), timeout + 6)
        except BackendFailure as exc:
            return _short(f"{exc.kind}: {exc.message}")
        except (TimeoutError, httpx.HTTPError, OSError) as exc:
            return _short(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return None


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _local(s: Settings) -> str | None:
    from deepresearch.tools.index.registry import IndexRegistry

    from ..runtime import DEMO_INDEX

    names = s.tools.search.local_indexes or [s.index]
    registry = IndexRegistry(s.tools)
    try:
        missing = [n for n in names if n != DEMO_INDEX and not registry.exists(n)]
    finally:
        registry.close()
    return f"no index named {', '.join(missing)}" if missing else None


def check_search(s: Settings) -> Check:
    search = s.tools.search
    working: list[str] = []
    skipped: list[str] = []
    broken: list[str] = []
    for name in dict.fromkeys(search.backends):
        if name == "searxng" and not search.searxng_url:
            skipped.append("searxng (no tools.search.searxng_url)")
        elif name in ("tavily", "brave") and not getattr(search, f"{name}_api_key"):
            skipped.append(f"{name} (no key)")
        elif name in ("tavily", "brave"):
            working.append(f"{name} (key set, not queried)")
        elif name == "local":
            problem = _local(s)
            (broken if problem else working).append(f"local ({problem})" if problem else
                                                    f"local ({', '.join(search.local_indexes or [s.index])})")
        else:
            problem = asyncio.run(_probe_web(name, s))
            (broken if problem else working).append(f"{name} ({problem})" if problem else f"{name} answers")
    found = "; ".join(filter(None, [
        f"working: {', '.join(working)}" if working else "no working search backend",
        f"failing: {', '.join(broken)}" if broken else "", f"skipped: {', '.join(skipped)}" if skipped else "",
    ]))
    if not working:
        return "fail", found, "set tools.search.backends (e.g. [\"local\"]) and build an index: deepresearch index"
    if broken:
        return "warn", found, "fix or remove the failing backends in tools.search.backends (the chain falls back)"
    return "ok", found, ""
