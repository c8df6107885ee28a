"""HTTP fetching for the browser: one guarded hop at a time, size-capped, redirects re-checked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx
from deepresearch.tools.base import ToolFailure
from deepresearch.tools.browser.netpolicy import AddressPolicy, BlockedAddress
from deepresearch.tools.browser.transport import guarded_transport
from deepresearch.tools.config import BrowserSettings

REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass
class Hop:
    url: str
    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


@dataclass
class Fetched:
    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    redirects: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def check_url(url: str) -> tuple[str, int]:
    """(host, port) of an http(s) URL, or ToolFailure('bad_url')."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolFailure("bad_url", f"only http(s) URLs can be opened, not {parts.scheme or 'a bare path'!r}")
    if not parts.hostname:
        raise ToolFailure("bad_url", f"no host in URL {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ToolFailure("bad_url", f"bad port in URL {url!r}") from None
    return parts.hostname, port


class Fetcher:
    def __init__(self, settings: BrowserSettings, policy: AddressPolicy):
        self.settings = settings
        self.policy = policy
        self.client = httpx.AsyncClient(
            transport=guarded_transport(policy), follow_redirects=False, trust_env=False,
            timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
            headers={"User-Agent": settings.user_agent, "Accept-Encoding": "gzip, deflate"},
        )

    def time_left(self, url: str, deadline: float | None) -> float:
        """Seconds one hop may take: the per-hop limit, cut to what is left of the caller's deadline
        (event-loop time), so the phases of one tool call share a single budget."""
        if deadline is None:
            return self.settings.timeout_s
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise ToolFailure("timeout", f"{url}: no time left within the call's time limit")
        return min(self.settings.timeout_s, left)

    async def hop(
        self, url: str, *, max_bytes: int | None = None, headers: dict[str, str] | None = None,
        deadline: float | None = None,
    ) -> Hop:
        """One request, no redirect following. Bodies over the cap raise ToolFailure('too_large')."""
        check_url(url)
        cap = max_bytes or self.settings.max_bytes
        limit = self.time_left(url, deadline)
        try:
            # A total deadline per hop: a server that trickles bytes forever must not hold us.
            async with asyncio.timeout(limit), self.client.stream("GET", url, headers=headers) as response:
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > cap:
                    raise ToolFailure("too_large", f"{url}: {int(declared)} bytes is over the {cap}-byte limit")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > cap:
                        raise ToolFailure("too_large", f"{url}: body is over the {cap}-byte limit")
                return Hop(url=url, status=response.status_code, headers=response.headers, body=bytes(body))
        except BlockedAddress as exc:
            raise ToolFailure("blocked", str(exc)) from None
        except (httpx.TimeoutException, TimeoutError):
            raise ToolFailure("timeout", f"{url}: no response within the time limit") from None
        except httpx.DecodingError as exc:
            raise ToolFailure("bad_response", f"{url}: cannot decode the response: {exc}") from None
        except httpx.HTTPError as exc:
            raise ToolFailure("network", f"{url}: {type(exc).__name__}: {exc}") from None

    async def fetch(self, url: str, *, max_bytes: int | None = None, deadline: float | None = None) -> Fetched:
        """GET following redirects; every hop is a new guarded connection to a re-checked URL. All hops
        together end by `deadline` (event-loop time) when one is given."""
        redirects: list[str] = []
        for _ in range(self.settings.max_redirects + 1):
            hop = await self.hop(url, max_bytes=max_bytes, deadline=deadline)
            location = hop.headers.get("location")
            if hop.status in REDIRECTS and location:
                redirects.append(url)
                url = urljoin(url, location.strip())
                continue
            return Fetched(url=url, status=hop.status, headers=hop.headers, body=hop.body, redirects=redirects)
        raise ToolFailure("too_many_redirects", f"more than {self.settings.max_redirects} redirects")

    async def close(self) -> None:
        await self.client.aclose()
