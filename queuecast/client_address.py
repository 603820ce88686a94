"""The address a request really came from, for throttles: never a header the client wrote.

``REMOTE_ADDR`` is the peer of the TCP connection. ``X-Forwarded-For`` is believed only
when that peer is a proxy the operator named (``QUEUECAST_TRUSTED_PROXIES``, addresses or
networks), and then only the hops our own proxies appended: the list is read from the
right, skipping trusted proxies, and the first other address is the client. A client that
sends its own ``X-Forwarded-For`` through a trusted proxy only prepends entries that are
never reached.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def proxy_networks(entries: Iterable[str]) -> list[Network]:
    """Parse ``QUEUECAST_TRUSTED_PROXIES`` entries (``10.0.0.1``, ``10.0.0.0/8``, ``::1``)."""
    try:
        return [ipaddress.ip_network(entry.strip(), strict=False) for entry in entries]
    except ValueError as exc:
        raise ValueError(f"QUEUECAST_TRUSTED_PROXIES: {exc}") from None


def _trusted(address: str, networks: list[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(meta: Mapping[str, Any], networks: list[Network]) -> str:
    """The client's address from a WSGI environ (``request.META``)."""
    peer = str(meta.get("REMOTE_ADDR") or "")
    if not networks or not _trusted(peer, networks):
        return peer
    hops = [h.strip() for h in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            return hop
    return hops[0] if hops else peer
