"""Online source: GitHub code search (REST `GET /search/code`, needs `GITHUB_TOKEN`).

The query is the identifiers, API names and error names the question mentions (never prose
words: code search requires every term, and "return" or "fix" match any file) plus
`language:<lang>` when the question names a language or a single-language library; a
question naming no code is not searched. Fragments come from the text-match media type.
GitHub's `score` is not a relevance: every result is scored on the question's terms instead
(`scoring.term_score`). Code-search items carry no licence, so none is claimed.

Rate limits are applied by the hook the GitHub sources share (`gh_limits`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from codeweaver.sources.base import McpTool, SourceError, SourceInfo, SourceStatus, register_source
from codeweaver.sources.gh_format import build_query, fragments, path_language
from codeweaver.sources.gh_limits import SECONDARY_LIMIT_SECONDS, github_client
from codeweaver.sources.http import HttpPolicy, SourceUnavailable
from codeweaver.sources.scoring import term_score
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

API_BASE = "https://api.github.com"
NO_TOKEN = "GITHUB_TOKEN not set"
MAX_PAGE = 100
__all__ = ["SECONDARY_LIMIT_SECONDS", "GitHubCodeSource", "make_github_source"]


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
        self.client, self._limits = github_client(
            self.name,
            token=self._token,
            base_url=base_url,
            accept="application/vnd.github.text-match+json",
            policy=policy,
            transport=transport,
            sleep=sleep,
            clock=clock,
            wall_clock=wall_clock,
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
        return self._limits.quota_left("searches this minute")

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


@register_source(
    "github",
    SourceInfo(
        mcp_tool=McpTool(
            "search_github",
            "Search GitHub",
            "Search GitHub code and GitHub issues (needs GITHUB_TOKEN). Best for usage "
            "examples in real projects and known bugs or workarounds.",
            intent="debugging",
        ),
        # Code search needs an identifier: a prose-only query builds no search at all.
        probe_query="json.loads in Python",
        key="github_token",
        key_required=True,
    ),
)
def make_github_source(settings: Settings) -> GitHubCodeSource:
    return GitHubCodeSource.from_settings(settings)
