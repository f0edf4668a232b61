"""A cache on disk for the online sources' GET requests, on hishel's SQLite storage.

Identical requests within the configured lifetime are answered from disk, so repeated
questions and benchmarks do not spend the services' request quotas.

- Kept: a GET answered `200` with a JSON body, for the configured lifetime, or less when the
  server's `Cache-Control: max-age` or `Expires` allows less.
- Never kept: `Cache-Control: no-store`, error statuses, bodies that are not JSON, successes
  that carry a throttle (replaying one would replay the block), and POSTs.
- Keyed by a SHA-256 of the method, the URL with its sorted query (the Stack Exchange key is
  part of it) and the request headers that change an answer, the Authorization token among
  them: an answer fetched with one token is never served to a request with another.
- Written without secrets: only key hashes name entries, and the stored copy of a request
  keeps neither its query nor its headers.

Freshness is checked here against an injectable wall clock; hishel's own TTL (the same
lifetime) removes expired entries from disk.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from hishel import AsyncBaseStorage, AsyncSqliteStorage, CacheStatus, Entry, Headers
from hishel import Request as StoredRequest
from hishel import Response as StoredResponse

logger = logging.getLogger(__name__)

CACHE_FILE = "responses.sqlite"
# Part of every key: changing it (a new key layout) leaves old entries unreachable.
KEY_VERSION = "codeweaver-http-1"
# The request headers that change what the services answer. The token is one of them:
# GitHub shows a token its private repositories, and its answers carry no `Vary` we read.
KEYED_HEADERS = ("authorization", "accept", "accept-language", "x-github-api-version")
STORED_AT = "x-codeweaver-stored-at"
KEPT_FOR = "x-codeweaver-kept-for"
# Not stored: how the body travelled (it is stored decoded), and cookies, not ours to replay.
_NOT_STORED = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "set-cookie"}
)


def cache_key(request: httpx.Request) -> str:
    """The entry key of `request`: a hash, so no key or token appears in it."""
    url = request.url
    query = "&".join(f"{name}={value}" for name, value in sorted(url.params.multi_items()))
    parts = [KEY_VERSION, request.method, str(url.copy_with(query=None)), query]
    parts += [f"{name}: {request.headers.get(name, '')}" for name in KEYED_HEADERS]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _http_date(value: str | None) -> float | None:
    parsed = email.utils.parsedate_tz(value) if value else None
    if parsed is None:
        return None
    try:
        return float(email.utils.mktime_tz(parsed))
    except (OverflowError, ValueError):
        return None


def lifetime(headers: httpx.Headers, configured: float, now: float) -> float:
    """Seconds to keep an answer: `configured`, or less if the server says so (0: not at all)."""
    directives: dict[str, str] = {}
    for part in headers.get_list("cache-control", split_commas=True):
        name, _, value = part.partition("=")
        directives[name.strip().lower()] = value.strip().strip('"')
    if "no-store" in directives:
        return 0.0
    # `no-cache` (revalidate before each reuse) is not honoured: revalidating would spend, on
    # every hit, the request quota this cache exists to save.
    if "max-age" in directives:
        max_age = directives["max-age"]
        return min(configured, float(max_age)) if max_age.isdigit() else 0.0
    if "expires" in headers:
        expires = _http_date(headers["expires"])
        if expires is None:
            return 0.0  # an invalid date means "already expired"
        sent = _http_date(headers.get("date"))
        return max(0.0, min(configured, expires - (sent if sent is not None else now)))
    return configured


def carries_throttle(response: httpx.Response, data: Any) -> bool:
    """Whether this success tells the client to slow down, so replaying it would re-block."""
    if "retry-after" in response.headers or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    # Stack Exchange puts its throttles in the body of a 200: `backoff`, and a quota at 0.
    return isinstance(data, dict) and ("backoff" in data or data.get("quota_remaining") == 0)


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def _read(stream: object) -> bytes:
    if not isinstance(stream, AsyncIterator):
        raise TypeError(f"expected an async stream, got {type(stream).__name__}")
    return b"".join([chunk async for chunk in stream])


def _stamp(headers: Headers) -> tuple[float, float]:
    """(stored at, kept for) of a stored answer; (0, 0), stale, if unreadable."""
    try:
        return float(headers[STORED_AT]), float(headers[KEPT_FOR])
    except (KeyError, ValueError):
        return 0.0, 0.0


class CachingTransport(httpx.AsyncBaseTransport):
    """Answers repeated GETs from `storage`; everything else goes to `inner` unchanged."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        storage: AsyncBaseStorage,
        *,
        lifetime: float,
        redact: Callable[[str], str],
        clock: Callable[[], float],
    ) -> None:
        self._inner = inner
        self._storage = storage
        self._lifetime = lifetime
        self._redact = redact
        self._clock = clock
        self._disabled = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # POSTs are not cached: hishel 2 caches GET and HEAD only, keyed by method and URL,
        # while Tavily's query (and key) travel in the JSON body of a POST.
        if request.method != "GET" or self._disabled:
            return await self._inner.handle_async_request(request)
        key = cache_key(request)
        cached = await self._lookup(key)
        if cached is not None:
            return cached
        response = await self._inner.handle_async_request(request)
        if response.status_code != 200:
            return response  # errors and throttles are never kept
        kept_for = lifetime(response.headers, self._lifetime, self._clock())
        if kept_for <= 0:
            return response
        body = await response.aread()  # httpx errors while reading propagate as usual
        try:
            data = json.loads(body)
        except ValueError:  # includes UnicodeDecodeError: a body the client cannot use
            return response
        if not carries_throttle(response, data):
            await self._store(request, key, response.headers, body, kept_for)
        return response

    async def _lookup(self, key: str) -> httpx.Response | None:
        now = self._clock()
        try:
            fresh: list[tuple[float, Entry]] = []
            for entry in await self._storage.get_entries(key):
                stored_at, kept_for = _stamp(entry.response.headers)
                if stored_at <= now < stored_at + kept_for:
                    fresh.append((stored_at, entry))
                else:
                    await self._storage.remove_entry(entry.id)
            if not fresh:
                return None
            _, entry = max(fresh, key=lambda pair: pair[0])
            body = await _read(entry.response.stream)
        except Exception as exc:  # the cache must never be why a source fails
            self._disable(exc)
            return None
        headers = [
            (name, value)
            for name in entry.response.headers
            if name not in (STORED_AT, KEPT_FOR)
            for value in entry.response.headers.get_list(name) or []
        ]
        return httpx.Response(
            entry.response.status_code,
            headers=headers,
            content=body,
            extensions={"caching": CacheStatus(from_cache=True, revalidated=False, stored=False)},
        )

    async def _store(
        self, request: httpx.Request, key: str, headers: httpx.Headers, body: bytes, kept_for: float
    ) -> None:
        stored = Headers({})
        for name, value in headers.multi_items():
            if name.lower() not in _NOT_STORED:
                stored[name] = value
        stored[STORED_AT] = repr(self._clock())
        stored[KEPT_FOR] = repr(kept_for)
        url = request.url
        try:
            entry = await self._storage.create_entry(
                StoredRequest("GET", self._redact(f"{url.scheme}://{url.host}{url.path}")),
                StoredResponse(200, stored, stream=_once(body)),
                key,
                ttl=kept_for,
            )
            await _read(entry.response.stream)  # hishel saves the body as its stream is read
        except Exception as exc:
            self._disable(exc)

    def _disable(self, exc: Exception) -> None:
        # hishel already absorbs passing SQLite errors; what reaches here (a database it
        # cannot use, a closed storage) would fail again on every request.
        logger.warning("HTTP cache disabled for this client: %s: %s", type(exc).__name__, exc)
        self._disabled = True

    async def aclose(self) -> None:
        await self._inner.aclose()


class CachingAsyncClient(httpx.AsyncClient):
    """An `httpx.AsyncClient` whose transports, given or built (proxies too), use the cache.

    Wrapping inside the client, as hishel's own client does, keeps what httpx decides from the
    environment (proxies, certificates) that passing a ready-made transport would turn off.
    """

    def __init__(
        self,
        *,
        cache_dir: Path,
        lifetime: float,
        redact: Callable[[str], str],
        clock: Callable[[], float] = time.time,
        **kwargs: Any,
    ) -> None:
        self._storage: AsyncSqliteStorage | None = None
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            # Checked here once: hishel would log a traceback for it on every request.
            logger.warning("HTTP cache off: cannot create %s (%s)", cache_dir, exc)
        else:
            self._storage = AsyncSqliteStorage(
                database_path=cache_dir / CACHE_FILE, default_ttl=lifetime
            )
        self._cache_options: dict[str, Any] = {
            "lifetime": lifetime,
            "redact": redact,
            "clock": clock,
        }
        super().__init__(**kwargs)

    def _cached(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        if self._storage is None:
            return inner
        return CachingTransport(inner, self._storage, **self._cache_options)

    def _init_transport(self, *args: Any, **kwargs: Any) -> httpx.AsyncBaseTransport:
        return self._cached(super()._init_transport(*args, **kwargs))

    def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> httpx.AsyncBaseTransport:
        return self._cached(super()._init_proxy_transport(*args, **kwargs))

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            if self._storage is not None:
                await self._storage.close()


@dataclass(frozen=True)
class ClearedCache:
    entries: int | None  # None: the file could not be read to count them
    size: int  # bytes


def _count_entries(database: Path) -> int | None:
    try:
        connection = sqlite3.connect(database)
        try:
            row = connection.execute(
                "SELECT COUNT(*) FROM entries WHERE chunk_count IS NOT NULL"
                " AND (expires_at IS NULL OR expires_at > ?)",
                (time.time(),),
            ).fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    return int(row[0])


def clear_http_cache(directory: Path) -> ClearedCache:
    """Delete the cache's files in `directory`; a missing directory is an empty cache.

    Files, not rows, are deleted so that a damaged or incompatible cache can be cleared too.
    """
    database = directory / CACHE_FILE
    entries = _count_entries(database) if database.is_file() else 0
    size = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = directory / f"{CACHE_FILE}{suffix}"
        try:
            size += path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
    return ClearedCache(entries, size)
