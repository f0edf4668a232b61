"""Online source: GitHub code search (REST `GET /search/code`, needs `GITHUB_TOKEN`).

The query is the identifiers, API names and error names the question mentions (never prose
words: code search requires every term, and "return" or "fix" match any file) plus
`language:<lang>` when the question names a language or a single-language library; a
question naming no code is not searched. Fragments come from the text-match media type.
GitHub's `score` is not a relevance: every result is scored on the question's terms instead
(`scoring.term_score`). Code-search items carry no licence, so none is claimed.

Rate limits (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
- any response with `x-ratelimit-remaining: 0` blocks the source until `x-ratelimit-reset`;
  a 403/429 carrying it fails at once (retrying before the reset cannot succeed);
- a 403/429 `retry-after` the shared client will wait for is retried there; a longer one
  blocks the source for that long; a secondary-limit 403 without either header blocks it
  for `SECONDARY_LIMIT_SECONDS` (GitHub: "wait at least one minute");
- 401 (bad credentials) blocks the source for the policy's cooldown: it will not heal.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from codeweaver.agent.state import Intent, SearchResult
from codeweaver.sources.base import SourceError, SourceStatus, register_source
from codeweaver.sources.gh_format import build_query, fragments, path_language
from codeweaver.sources.http import (
    HttpPolicy,
    SourceHttpClient,
    SourceUnavailable,
    retry_after_seconds,
)
from codeweaver.sources.scoring import term_score

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

API_BASE = "https://api.github.com"
NO_TOKEN = "GITHUB_TOKEN not set"
MAX_PAGE = 100
SECONDARY_LIMIT_SECONDS = 60.0


class GitHubCodeSource:
    """Searches code on GitHub; skipped without a token (code search requires one)."""

    name = "github"

    def __init__(
        self,
        token: str | None,
        *,
        base_url: str = API_BASE,
        policy: HttpPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._token = token or None
        self._wall_clock = wall_clock
        self._quota: tuple[str, str] | None = None  # (remaining, limit) of the last answer
        headers = {
            "Accept": "application/vnd.github.text-match+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "codeweaver",
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        self.client = SourceHttpClient(
            self.name,
            base_url=base_url.rstrip("/"),
            headers=headers,
            secrets=[self._token],
            policy=policy,
            transport=transport,
            sleep=sleep,
            clock=clock,
            response_hook=self._inspect,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> GitHubCodeSource:
        token = settings.github_token.get_secret_value() if settings.github_token else None
        policy = HttpPolicy.from_settings(settings)
        return cls(token, base_url=settings.github_api_url, policy=policy)

    def status(self) -> SourceStatus:
        if not self._token:
            return SourceStatus("skipped", NO_TOKEN)
        blocked = self.client.blocked_reason
        if blocked:
            return SourceStatus("skipped", "backing off: " + re.sub(r"^skipped:?\s*", "", blocked))
        return SourceStatus("ready")

    async def aclose(self) -> None:
        await self.client.aclose()

    def quota_left(self) -> str | None:
        if self._quota is None:
            return None
        remaining, limit = self._quota
        return f"{remaining} of {limit} searches this minute"

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        if not self._token:
            raise SourceUnavailable(NO_TOKEN)
        q = build_query(query)
        if not q or limit <= 0:
            return []
        data = await self.client.get_json(
            "/search/code", {"q": q, "per_page": min(limit, MAX_PAGE)}
        )
        if not isinstance(data, dict) or not isinstance(data.get("items", []), list):
            raise SourceError(
                "github returned an unexpected response (no `items` list)", kind="bad_response"
            )
        if data.get("incomplete_results"):
            logger.info("github: code search timed out server-side; results are partial")
        items = [
            item
            for item in data.get("items", [])
            if isinstance(item, dict) and isinstance(item.get("repository"), dict)
        ][:limit]
        results = [self._result(item, query) for item in items]
        return sorted(results, key=lambda r: r.get("score") or 0.0, reverse=True)

    def _result(self, item: dict[str, Any], query: str) -> SearchResult:
        repository: dict[str, Any] = item["repository"]
        repo = str(repository.get("full_name", "?"))
        path = str(item.get("path", item.get("name", "")))
        text = fragments(item)
        snippet = f"[{path_language(path)} · {path}]" + (f"\n{text}" if text else "")
        return SearchResult(
            title=f"{repo}: {path}",
            url=str(item.get("html_url") or repository.get("html_url", "")),
            snippet=snippet,
            source=self.name,
            score=term_score(query, path, text),
            date=None,
            reference=f"github:{repo}/{path}@{item.get('sha', '')}",
            attribution=f"code from {repo}; reuse under that repository's licence",
        )

    async def _inspect(self, response: httpx.Response) -> None:
        """Apply GitHub's rate-limit headers; fail fast when waiting cannot help."""
        status = response.status_code
        remaining = response.headers.get("x-ratelimit-remaining")
        limit = response.headers.get("x-ratelimit-limit")
        if remaining is not None and limit is not None:
            self._quota = (remaining, limit)
        if remaining == "0":
            seconds = self._until_reset(response)
            reason = f"GitHub rate limit used up; resets in {seconds:.0f}s"
            logger.warning("github: %s", reason)
            self.client.block(seconds, reason)
            if status in (403, 429):
                raise SourceError(f"github {reason}", kind="rate_limited")
            return
        if status == 401:
            reason = "GITHUB_TOKEN rejected (HTTP 401)"
            self.client.block(self.client.policy.cooldown, reason)
            return  # the shared client raises the HTTP 401 error itself, without retrying
        if status not in (403, 429):
            return
        retry_after = retry_after_seconds(response)
        if retry_after is not None:
            if retry_after <= self.client.policy.max_retry_after:
                return  # short enough: the shared client waits and retries
            reason = f"GitHub secondary rate limit; retry after {retry_after:.0f}s"
            self.client.block(retry_after, reason)
            raise SourceError(f"github {reason}", kind="rate_limited")
        await response.aread()
        if "rate limit" in response.text.lower():
            reason = f"GitHub secondary rate limit; waiting {SECONDARY_LIMIT_SECONDS:.0f}s"
            self.client.block(SECONDARY_LIMIT_SECONDS, reason)
            raise SourceError(f"github {reason}", kind="rate_limited")

    def _until_reset(self, response: httpx.Response) -> float:
        reset = response.headers.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return max(1.0, float(reset) - self._wall_clock())
        return SECONDARY_LIMIT_SECONDS


@register_source("github")
def make_github_source(settings: Settings) -> GitHubCodeSource:
    return GitHubCodeSource.from_settings(settings)
