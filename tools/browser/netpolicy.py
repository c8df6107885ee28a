"""Which addresses the browser may connect to.

Private, loopback, link-local, multicast and reserved addresses (anything not globally routable) are
refused unless the host, host:port or a CIDR containing the address is on the allow-list. The check
runs on resolved addresses, at connect time, for every connection (so also on every redirect).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedAddress(Exception):
    """A connection was refused by the address policy."""


def _unmapped(ip: IPAddress) -> IPAddress:
    # ::ffff:127.0.0.1 must be judged as 127.0.0.1.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_public(ip: IPAddress) -> bool:
    ip = _unmapped(ip)
    return ip.is_global and not ip.is_multicast


@dataclass
class AddressPolicy:
    block_private: bool = True
    allow_hosts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self._hosts: set[str] = set()
        for entry in self.allow_hosts:
            entry = entry.strip().lower()
            if "/" in entry:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            elif entry:
                self._hosts.add(entry)

    def allow(self, entry: str) -> None:
        """Add an allow-list entry at run time (e.g. the local web the toolbox was pointed at)."""
        self.allow_hosts.append(entry)
        self.__post_init__()

    def host_allowed(self, host: str, port: int | None) -> bool:
        host = host.lower().strip("[]")
        return host in self._hosts or (port is not None and f"{host}:{port}" in self._hosts)

    def address_allowed(self, ip: IPAddress, host: str, port: int | None) -> bool:
        if not self.block_private or is_public(ip):
            return True
        if self.host_allowed(host, port) or self.host_allowed(str(_unmapped(ip)), port):
            return True
        return any(_unmapped(ip) in net for net in self._networks)

    def check(self, ip: IPAddress, host: str, port: int | None) -> None:
        if not self.address_allowed(ip, host, port):
            raise BlockedAddress(
                f"refused to connect to {host} ({ip}): private, loopback or link-local address "
                "(add it to browser.allow_hosts to permit)"
            )


async def resolve(host: str, port: int) -> list[IPAddress]:
    """All addresses a host name resolves to (an IP literal resolves to itself)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OSError(f"cannot resolve {host}: {exc.strerror}") from None
    seen: dict[str, IPAddress] = {}
    for *_, sockaddr in infos:
        seen.setdefault(sockaddr[0], ipaddress.ip_address(sockaddr[0].split("%", 1)[0]))
    return list(seen.values())


async def checked_addresses(policy: AddressPolicy, host: str, port: int) -> list[IPAddress]:
    """Resolve and refuse if any address is blocked (a name with one private address is suspect)."""
    addresses = await resolve(host, port)
    for ip in addresses:
        policy.check(ip, host, port)
    return addresses
