"""The one HTTP layer every online source uses: timeouts, retries, a breaker, redaction.

- a per-source timeout, and a short connect timeout so an unreachable network is
  noticed within about a second;
- retries with exponential backoff and full jitter on 429 and 5xx (and GitHub-style
  403 rate limits), honouring `Retry-After`; never on other 4xx client errors;
- a breaker: a source whose calls fail `failures_to_open` times in a row is skipped,
  without I/O, until its cooldown ends (for a CLI run, the rest of the run). A connect
  failure counts like any other: it is not retried inside the request (that would only add
  the connect timeout again), but one lost connection does not skip the source;
- errors say why (`SourceError.kind`: dns, tls, network, timeout, rate_limited, auth, http,
  bad_response) and keep the httpx exception as their `__cause__`;
- with `HttpPolicy.cache_dir`, a cache on disk answers repeated GETs (`http_cache`);
- secrets (keys, tokens) never appear in errors, logs or steps;
- an optional response hook sees every raw response first (rate-limit headers of a
  success, the JSON body of a 4xx throttle); it may `block()` the source or raise a
  `SourceError`, which ends the request at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from codeweaver.sources.base import FailureKind, SourceError
from codeweaver.sources.http_cache import CachingAsyncClient

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

ResponseHook = Callable[[httpx.Response], Awaitable[None]]


class SourceUnavailable(SourceError):
    """The source is not called at all right now (breaker open, backing off, offline)."""


class HttpStatusError(SourceError):
    """The server answered with an error status; `status_code` says which."""

    def __init__(self, message: str, status_code: int, *, kind: FailureKind = "http") -> None:
        super().__init__(message, kind=kind)
        self.status_code = status_code


@dataclass(frozen=True)
class HttpPolicy:
    timeout: float = 8.0
    connect_timeout: float = 1.0
    retries: int = 2
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    # A server asking to wait longer than this is treated as a failure, not waited for.
    max_retry_after: float = 10.0
    failures_to_open: int = 2
    cooldown: float = 300.0
    # Where repeated GETs are answered from (None: no cache), and for how long at most.
    cache_dir: Path | None = None
    cache_seconds: float = 24 * 3600.0

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpPolicy:
        return cls(
            timeout=settings.http_timeout,
            connect_timeout=settings.connect_timeout,
            cache_dir=settings.http_cache_dir if settings.http_cache else None,
            cache_seconds=settings.http_cache_hours * 3600,
        )


def retry_after_seconds(response: httpx.Response, now: float | None = None) -> float | None:
    """`Retry-After` as seconds (delta or HTTP date), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def status_kind(response: httpx.Response) -> FailureKind:
    """What an error status means: a rejected key, a used-up limit, or another error."""
    if response.status_code == 401:
        return "auth"
    if response.status_code == 429 or (response.status_code == 403 and is_rate_limited(response)):
        return "rate_limited"
    return "http"


# How name-resolution failures read on Linux (glibc, musl), macOS and Windows.
_DNS_MARKERS = (
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname",
    "getaddrinfo failed",
    "no address associated with hostname",
    "name does not resolve",
)
_TLS_MARKERS = ("ssl", "tls", "certificate")


def connect_kind(exc: httpx.TransportError) -> FailureKind:
    """Why a connection could not be made, from the messages of `exc` and what it wraps."""
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    texts: list[str] = []
    cause: BaseException | None = exc
    while cause is not None and len(texts) < 5:
        texts.append(f"{type(cause).__name__} {cause}".lower())
        cause = cause.__cause__ or cause.__context__
    text = " ".join(texts)
    if "gaierror" in text or any(marker in text for marker in _DNS_MARKERS):
        return "dns"
    if any(marker in text for marker in _TLS_MARKERS):
        return "tls"
    return "network"


_CONNECT_REASONS: dict[FailureKind, str] = {
    "dns": "host name does not resolve",
    "tls": "TLS handshake failed",
    "timeout": "network unreachable: no connection within {connect:g}s",
    "network": "network unreachable",
}


def is_rate_limited(response: httpx.Response) -> bool:
    """429/5xx, or a 403 that says it is a rate limit (GitHub primary and secondary)."""
    if response.status_code in RETRY_STATUSES:
        return True
    return response.status_code == 403 and (
        "retry-after" in response.headers or response.headers.get("x-ratelimit-remaining") == "0"
    )


class SourceHttpClient:
    """JSON over HTTP for one source, with the resilience rules above."""

    def __init__(
        self,
        source: str,
        *,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str | None] = (),
        policy: HttpPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        response_hook: ResponseHook | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.source = source
        self._response_hook = response_hook
        self.base_url = base_url
        self.headers = dict(headers or {})
        self.secrets = [s for s in secrets if s]
        self.policy = policy or HttpPolicy()
        self._transport = transport
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock  # the cache's: its entries outlive the process
        self._failures = 0
        self._blocked_until = 0.0
        self._blocked_reason = ""
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- state ---------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def block(self, seconds: float, reason: str) -> None:
        """Skip this source for `seconds` (a server's backoff request, an open breaker)."""
        self._blocked_until = max(self._blocked_until, self._clock() + seconds)
        self._blocked_reason = reason

    @property
    def blocked_reason(self) -> str | None:
        if self._clock() < self._blocked_until:
            return self._blocked_reason
        return None

    def record_failure(self, reason: str) -> None:
        """Count a failure found outside the client (e.g. by the hook) towards the breaker."""
        self._record(False, reason)

    def _record(self, ok: bool, reason: str = "") -> None:
        if ok:
            self._failures = 0
            return
        self._failures += 1
        if self._failures >= self.policy.failures_to_open:
            self.block(self.policy.cooldown, f"skipped after {self._failures} failures: {reason}")

    # -- transport -----------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            timeout = httpx.Timeout(self.policy.timeout, connect=self.policy.connect_timeout)
            hooks = {"response": [self._response_hook]} if self._response_hook else {}
            options: dict[str, Any] = {
                "base_url": self.base_url,
                "headers": self.headers,
                "timeout": timeout,
                "transport": self._transport,
                "follow_redirects": True,
                # A cached answer passes the hook too: its quota headers are re-read, which
                # is harmless, since answers that carry a throttle are never cached.
                "event_hooks": hooks,
            }
            if self.policy.cache_dir is None:
                self._client = httpx.AsyncClient(**options)
            else:
                # One storage per event loop: its SQLite connection belongs to the loop.
                self._client = CachingAsyncClient(
                    cache_dir=self.policy.cache_dir,
                    lifetime=self.policy.cache_seconds,
                    redact=self.redact,
                    clock=self._wall_clock,
                    **options,
                )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _delay(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before the next attempt, or None to give up."""
        if attempt >= self.policy.retries:
            return None
        asked = retry_after_seconds(response) if response is not None else None
        if asked is not None:
            if asked > self.policy.max_retry_after:
                # Too long to wait inside one answer: skip the source until then instead.
                self.block(asked, f"skipped: the server asked to wait {asked:.0f}s")
                return None
            return asked
        ceiling = min(self.policy.backoff_max, self.policy.backoff_base * 2**attempt)
        return random.uniform(0, ceiling)  # full jitter spreads retries of many clients

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
    ) -> Any:
        """The decoded JSON body of a successful response; raises `SourceError` otherwise."""
        blocked = self.blocked_reason
        if blocked:
            raise SourceUnavailable(blocked)
        attempt = 0
        while True:
            response: httpx.Response | None = None
            error: httpx.HTTPError | None = None
            kind: FailureKind
            try:
                response = await self._http().request(method, path, params=params, json=json_body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Not retried: retrying now would only add the connect timeout again. It
                # counts towards the breaker, so one lost connection does not skip the source.
                kind = connect_kind(exc)
                reason = _CONNECT_REASONS[kind].format(connect=self.policy.connect_timeout)
                reason = f"{reason} ({type(exc).__name__})"
                self._record(False, reason)
                # The message names no URL (the key may be in it); the cause is for callers.
                raise SourceUnavailable(reason, kind=kind) from exc
            except httpx.TimeoutException as exc:
                error, kind = exc, "timeout"
                failure = f"timed out after {self.policy.timeout:g}s ({type(exc).__name__})"
            except httpx.HTTPError as exc:
                error, kind = exc, "network"
                failure = self.redact(f"{type(exc).__name__}: {exc}")
            else:
                if response.is_success:
                    return self._decode(response)
                kind = status_kind(response)
                if not is_rate_limited(response):
                    self._record(False, f"HTTP {response.status_code}")
                    raise HttpStatusError(self._describe(response), response.status_code, kind=kind)
                failure = self._describe(response)
            delay = self._delay(attempt, response)
            if delay is None:
                self._record(False, failure)
                if response is not None:
                    raise HttpStatusError(failure, response.status_code, kind=kind)
                raise SourceError(failure, kind=kind) from error
            logger.info("%s: %s; retrying in %.2fs", self.source, failure, delay)
            await self._sleep(delay)
            attempt += 1

    def _decode(self, response: httpx.Response) -> Any:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._record(False, "malformed JSON")
            message = f"{self.source} returned malformed JSON"
            raise SourceError(message, kind="bad_response") from exc
        self._record(True)
        return data

    def _describe(self, response: httpx.Response) -> str:
        body = response.text[:200].replace("\n", " ")
        return self.redact(f"HTTP {response.status_code} from {self.source}: {body}".strip())

    async def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self.request_json("GET", path, params=params)

    async def post_json(self, path: str, body: Any) -> Any:
        return await self.request_json("POST", path, json_body=body)
