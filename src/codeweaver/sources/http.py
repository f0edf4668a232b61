"""The one HTTP layer every online source uses: timeouts, retries, a breaker, redaction.

- a per-source timeout, and a short connect timeout so an unreachable network is
  noticed within about a second;
- retries with exponential backoff and full jitter on 429 and 5xx (and GitHub-style
  403 rate limits), honouring `Retry-After`; never on other 4xx client errors;
- a breaker: a source whose calls keep failing is skipped, without I/O, until its
  cooldown ends (for a CLI run, the rest of the run);
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
from typing import TYPE_CHECKING, Any

import httpx

from codeweaver.sources.base import SourceError

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

ResponseHook = Callable[[httpx.Response], Awaitable[None]]


class SourceUnavailable(SourceError):
    """The source is not called at all right now (breaker open, backing off, offline)."""


class HttpStatusError(SourceError):
    """The server answered with an error status; `status_code` says which."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
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

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpPolicy:
        return cls(timeout=settings.http_timeout, connect_timeout=settings.connect_timeout)


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
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers=self.headers,
                timeout=timeout,
                transport=self._transport,
                follow_redirects=True,
                event_hooks=hooks,
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
            try:
                response = await self._http().request(method, path, params=params, json=json_body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Unreachable: retrying now would only add the connect timeout again.
                reason = f"network unreachable ({type(exc).__name__})"
                self._record(False, reason)
                self.block(self.policy.cooldown, f"skipped: {reason}")
                raise SourceUnavailable(reason) from None
            except httpx.TimeoutException as exc:
                failure = f"timed out after {self.policy.timeout:g}s ({type(exc).__name__})"
            except httpx.HTTPError as exc:
                failure = self.redact(f"{type(exc).__name__}: {exc}")
            else:
                if response.is_success:
                    return self._decode(response)
                if not is_rate_limited(response):
                    self._record(False, f"HTTP {response.status_code}")
                    raise HttpStatusError(self._describe(response), response.status_code)
                failure = self._describe(response)
            delay = self._delay(attempt, response)
            if delay is None:
                self._record(False, failure)
                if response is not None:
                    raise HttpStatusError(failure, response.status_code)
                raise SourceError(failure)
            logger.info("%s: %s; retrying in %.2fs", self.source, failure, delay)
            await self._sleep(delay)
            attempt += 1

    def _decode(self, response: httpx.Response) -> Any:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._record(False, "malformed JSON")
            raise SourceError(f"{self.source} returned malformed JSON") from None
        self._record(True)
        return data

    def _describe(self, response: httpx.Response) -> str:
        body = response.text[:200].replace("\n", " ")
        return self.redact(f"HTTP {response.status_code} from {self.source}: {body}".strip())

    async def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return await self.request_json("GET", path, params=params)

    async def post_json(self, path: str, body: Any) -> Any:
        return await self.request_json("POST", path, json_body=body)
