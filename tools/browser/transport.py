"""An httpx transport whose every TCP connection goes through the address policy.

The check happens where the socket is opened, on the address actually dialled, so neither a redirect
nor a DNS answer that changes between check and connect (rebinding) can slip past it. TLS still
verifies the original host name (httpcore passes it separately as SNI).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore
import httpx
from deepresearch.tools.browser.netpolicy import AddressPolicy, BlockedAddress, checked_addresses


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, policy: AddressPolicy, inner: httpcore.AsyncNetworkBackend | None = None):
        self.policy = policy
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await checked_addresses(self.policy, host, port)
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        last: Exception | None = None
        for ip in addresses:  # dial the checked address itself, never the name again
            try:
                return await self.inner.connect_tcp(
                    str(ip), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as exc:
                last = exc
        raise last or httpcore.ConnectError(f"cannot connect to {host}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        raise BlockedAddress("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_transport(policy: AddressPolicy, *, max_connections: int = 20) -> httpx.AsyncHTTPTransport:
    transport = httpx.AsyncHTTPTransport(retries=0, trust_env=False)
    # httpx does not expose the network backend; swap in a pool that uses ours. Fail closed if the
    # private attribute ever moves (the SSRF tests also cover this).
    if not hasattr(transport, "_pool"):
        raise RuntimeError("httpx internals changed: cannot install the SSRF guard")
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), max_connections=max_connections, http1=True, http2=False,
        retries=0, network_backend=GuardedNetworkBackend(policy),
    )
    return transport
