"""GitHub's REST rate limits, read from every response: shared by the GitHub sources.

Rules (GitHub's documented rate-limit headers and statuses):
- any response with `x-ratelimit-remaining: 0` blocks the client until `x-ratelimit-reset`;
  a 403/429 carrying it fails at once (retrying before the reset cannot succeed);
- a 403/429 `retry-after` the shared client will wait for is retried there; a longer one
  blocks the client for that long; a secondary-limit 403 without either header blocks it
  for `SECONDARY_LIMIT_SECONDS` (GitHub: "wait at least one minute");
- 401 (bad credentials) blocks the client for the policy's cooldown: it will not heal.

A source builds its client with `github_client`, which wires a `GitHubRateLimits` in as the
client's response hook; `quota_left` then reports the last answer's quota.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx

from codeweaver.sources.base import SourceError
from codeweaver.sources.http import HttpPolicy, SourceHttpClient, retry_after_seconds

logger = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
SECONDARY_LIMIT_SECONDS = 60.0
TOKEN_REJECTED = "GITHUB_TOKEN rejected (HTTP 401)"


class GitHubRateLimits:
    """The response hook of one GitHub client: quota bookkeeping and blocking."""

    def __init__(self, source: str, *, wall_clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self._wall_clock = wall_clock
        self._client: SourceHttpClient | None = None
        self.quota: tuple[str, str] | None = None  # (remaining, limit) of the last answer

    def attach(self, client: SourceHttpClient) -> None:
        """The client this hook blocks (the hook is created first: the client needs it)."""
        self._client = client

    @property
    def client(self) -> SourceHttpClient:
        if self._client is None:
            raise RuntimeError("GitHubRateLimits used before attach()")
        return self._client

    def quota_left(self, unit: str) -> str | None:
        """E.g. `8 of 10 searches this minute`, or None before any answer."""
        if self.quota is None:
            return None
        remaining, limit = self.quota
        return f"{remaining} of {limit} {unit}"

    async def inspect(self, response: httpx.Response) -> None:
        """Apply GitHub's rate-limit headers; fail fast when waiting cannot help."""
        status = response.status_code
        remaining = response.headers.get("x-ratelimit-remaining")
        limit = response.headers.get("x-ratelimit-limit")
        if remaining is not None and limit is not None:
            self.quota = (remaining, limit)
        if remaining == "0":
            seconds = self.until_reset(response)
            reason = f"GitHub rate limit used up; resets in {seconds:.0f}s"
            logger.warning("%s: %s", self.source, reason)
            self.client.block(seconds, reason)
            if status in (403, 429):
                raise SourceError(f"{self.source} {reason}", kind="rate_limited")
            return
        if status == 401:
            self.client.block(self.client.policy.cooldown, TOKEN_REJECTED)
            return  # the shared client raises the HTTP 401 error itself, without retrying
        if status not in (403, 429):
            return
        retry_after = retry_after_seconds(response)
        if retry_after is not None:
            if retry_after <= self.client.policy.max_retry_after:
                return  # short enough: the shared client waits and retries
            reason = f"GitHub secondary rate limit; retry after {retry_after:.0f}s"
            self.client.block(retry_after, reason)
            raise SourceError(f"{self.source} {reason}", kind="rate_limited")
        await response.aread()
        if "rate limit" in response.text.lower():
            reason = f"GitHub secondary rate limit; waiting {SECONDARY_LIMIT_SECONDS:.0f}s"
            self.client.block(SECONDARY_LIMIT_SECONDS, reason)
            raise SourceError(f"{self.source} {reason}", kind="rate_limited")

    def until_reset(self, response: httpx.Response) -> float:
        """Seconds until `x-ratelimit-reset` (an epoch second), at least one."""
        reset = response.headers.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return max(1.0, float(reset) - self._wall_clock())
        return SECONDARY_LIMIT_SECONDS


def github_client(
    source: str,
    *,
    token: str | None,
    base_url: str,
    accept: str = "application/vnd.github+json",
    policy: HttpPolicy | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Callable[[float], Any] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
) -> tuple[SourceHttpClient, GitHubRateLimits]:
    """A shared client for GitHub's REST API with the rate-limit hook wired in.

    The token, when given, is sent as `Authorization: Bearer …` and redacted everywhere."""
    headers = {
        "Accept": accept,
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": "codeweaver",  # GitHub rejects requests without a User-Agent
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    limits = GitHubRateLimits(source, wall_clock=wall_clock)
    client = SourceHttpClient(
        source,
        base_url=base_url.rstrip("/"),
        headers=headers,
        secrets=[token],
        policy=policy,
        transport=transport,
        sleep=sleep,
        clock=clock,
        wall_clock=wall_clock,
        response_hook=limits.inspect,
    )
    limits.attach(client)
    return client, limits
