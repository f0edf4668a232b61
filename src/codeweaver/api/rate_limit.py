"""The per-client request budget, and who a client is when a proxy stands in front.

The budget is a moving minute kept by `limits`: in memory for one process, in Redis
(`CODEWEAVER_REDIS_URL`) so several server processes share one budget. A client is its
user when tokens are configured, else its address; never the raw text of a header, which
a client can vary at will. `X-Forwarded-For` is believed only from configured proxies.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections.abc import Awaitable, Sequence
from typing import Any, cast

from fastapi import HTTPException, Request, status
from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# One IPv6 subscriber usually holds a whole /64: counting single addresses would give
# it 2^64 budgets.
IPV6_CLIENT_PREFIX = 64
# How long a live check of the shared store may take before it counts as down.
LIVE_CHECK_SECONDS = 1.0


class RateStoreError(RuntimeError):
    """The shared rate-limit store cannot be reached."""


class ProxySettingError(ValueError):
    """CODEWEAVER_TRUSTED_PROXIES holds something that is no address or network."""


def parse_networks(entries: Sequence[str]) -> list[Network]:
    """Addresses or networks (`10.0.0.0/8`, `::1`); a bad entry is a `ProxySettingError`."""
    networks: list[Network] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ProxySettingError(
                f"CODEWEAVER_TRUSTED_PROXIES: not an address or network: {entry!r}"
            ) from None
    return networks


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: list[Network]
) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def client_address(request: Request, proxies: list[Network]) -> str:
    """The client's address: the peer, or, behind trusted proxies, the nearest address in
    `X-Forwarded-For` that is not one of them (the ones before it can be forged)."""
    peer = _address(request.client.host) if request.client else None
    if peer is None:
        return "unknown"
    if proxies and _trusted(peer, proxies):
        hops = [h for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                break  # a malformed hop: trust nothing beyond it
            if not _trusted(address, proxies):
                peer = address
                break
    if peer.version == 6:
        return str(ipaddress.ip_network(f"{peer}/{IPV6_CLIENT_PREFIX}", strict=False))
    return str(peer)


def rate_key(user: str | None, address: str) -> str:
    """Users count against their own budget; without tokens, addresses do."""
    return f"user:{user}" if user is not None else f"addr:{address}"


async def ping_redis(url: str, timeout: float = LIVE_CHECK_SECONDS) -> None:
    """A live check of the Redis at `url`, the budget's shared store (while it is away,
    every budgeted request gets 503): returns once it answers a PING, raises when it does
    not within `timeout`."""
    from redis.asyncio import Redis

    client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await cast("Awaitable[bool]", client.ping())  # typed for both redis clients
    finally:
        await client.aclose()


class RequestLimiter:
    """At most `per_minute` requests per key in any moving minute."""

    def __init__(self, per_minute: int, redis_url: str | None = None) -> None:
        self.per_minute = per_minute
        self.shared = redis_url is not None
        self._item = RateLimitItemPerMinute(per_minute, namespace="codeweaver-api")
        self._storage: Storage
        if redis_url is not None:
            uri = redis_url if redis_url.startswith("async+") else f"async+{redis_url}"
            self._storage = RedisStorage(
                uri, implementation="redispy", key_prefix="codeweaver", wrap_exceptions=True
            )
        else:
            self._storage = MemoryStorage()
        self._limiter = MovingWindowRateLimiter(self._storage)

    async def check_store(self) -> None:
        """Fail early, with the reason, when the shared store is unreachable."""
        try:
            reachable = await self._storage.check()
        except Exception as exc:
            raise RateStoreError(f"Redis at CODEWEAVER_REDIS_URL: {type(exc).__name__}") from exc
        if not reachable:
            raise RateStoreError("Redis at CODEWEAVER_REDIS_URL does not answer")

    async def check(self, key: str) -> None:
        """Count one request against `key`; 429 with `Retry-After` over the budget."""
        try:
            allowed = await self._limiter.hit(self._item, key)
        except Exception as exc:  # the store went away: refuse, but say why
            logger.warning("rate-limit store failed: %s", exc)
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "the rate-limit store is unreachable; try again shortly",
                headers={"Retry-After": "10"},
            ) from None
        if allowed:
            return
        retry = await self._retry_after(key)
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many requests: the limit is {self.per_minute} per minute; try again in {retry} s",
            headers={"Retry-After": str(retry)},
        )

    async def _retry_after(self, key: str) -> int:
        try:
            stats: Any = await self._limiter.get_window_stats(self._item, key)
        except Exception:
            return 60
        return max(1, min(60, math.ceil(float(stats.reset_time) - time.time())))
