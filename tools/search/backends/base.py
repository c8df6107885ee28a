"""The backend interface and the HTTP error mapping the web backends share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from deepresearch.tools.search.types import BackendFailure, SearchHit


class SearchBackend(ABC):
    name: str
    cacheable: bool = True

    @abstractmethod
    async def search(self, query: str, k: int) -> list[SearchHit]: ...

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass


class KeyedApiBackend(SearchBackend):
    """A hosted search API reached with an API key over the shared HTTP client (Brave, Tavily)."""

    def __init__(self, api_key: str, url: str, client: httpx.AsyncClient):
        self.api_key = api_key
        self.url = url
        self.client = client


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        from datetime import UTC, datetime

        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


async def request_json(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> Any:
    """Send a request and return its JSON body, mapping every failure to a BackendFailure kind."""
    try:
        response = await client.request(method, url, **kwargs)
    except httpx.TimeoutException as exc:
        raise BackendFailure("timeout", f"{type(exc).__name__} from {url}") from None
    except httpx.HTTPError as exc:
        raise BackendFailure("network", f"{type(exc).__name__}: {exc}") from None
    if response.status_code == 429:
        raise BackendFailure("rate_limited", "HTTP 429 Too Many Requests", retry_after_s=_retry_after(response))
    if response.status_code >= 400:
        raise BackendFailure("http_error", f"HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise BackendFailure("bad_response", "response is not JSON") from None


def text_field(row: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""
