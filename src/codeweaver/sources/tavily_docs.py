"""`tavily_docs`: Tavily web search restricted to the official docs of the technologies asked about.

One `POST https://api.tavily.com/search` per query (Bearer auth, ``search_depth: "basic"``,
``include_domains`` from `docs_domains`), through the shared `SourceHttpClient`, which owns
timeouts, retries (429/5xx, honouring ``Retry-After``), the breaker and key redaction.
This module only adds what is specific to Tavily: the request body, the result mapping and
readable messages for Tavily's status codes (401 bad key, 432/433 plan limits).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

import httpx

from codeweaver.config import Settings
from codeweaver.sources.base import (
    FailureKind,
    Source,
    SourceError,
    SourceInfo,
    SourceStatus,
    register_source,
)
from codeweaver.sources.docs_domains import (
    DocsDomains,
    DocsDomainsError,
    default_domains,
    load_domains,
)
from codeweaver.sources.http import (
    HttpPolicy,
    HttpStatusError,
    SourceHttpClient,
    SourceUnavailable,
)
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

SOURCE_NAME = "tavily_docs"
TAVILY_BASE_URL = "https://api.tavily.com"
SEARCH_PATH = "/search"
#: Tavily rejects longer queries with HTTP 400 ("Max query length is 400 characters").
MAX_QUERY_CHARS = 400
#: Tavily's documented maximum for `max_results`.
MAX_RESULTS = 20
SNIPPET_CHARS = 1200
NO_KEY = "TAVILY_API_KEY not set"

#: Status → (headline, whether to stop calling Tavily for the rest of the cooldown).
_STATUS_MESSAGES: dict[int, tuple[str, bool]] = {
    400: ("Tavily rejected the request", False),
    401: ("invalid TAVILY_API_KEY (Tavily answered 401 Unauthorized)", True),
    429: ("Tavily rate limit exceeded (HTTP 429); try again later", False),
    432: ("Tavily plan usage limit exceeded (HTTP 432): upgrade the plan or wait", True),
    433: (
        "Tavily pay-as-you-go limit exceeded (HTTP 433): raise it in the Tavily dashboard",
        True,
    ),
}
_STATUS_KINDS: dict[int, FailureKind] = {
    400: "http",
    401: "auth",
    429: "rate_limited",
    432: "rate_limited",
    433: "rate_limited",
}


def http_status_of(error: SourceError) -> int | None:
    """The HTTP status of a failed request, if the server answered at all."""
    return error.status_code if isinstance(error, HttpStatusError) else None


def clip_query(query: str, limit: int = MAX_QUERY_CHARS) -> str:
    """`query` with whitespace collapsed, cut at a word boundary to at most `limit` chars."""
    text = " ".join(query.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


def _score(value: object) -> float | None:
    # bool is an int: a stray `true` must not become a perfect score.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value):
        return None
    return min(1.0, max(0.0, float(value)))


def to_search_result(item: object) -> SearchResult | None:
    """One Tavily result as a `SearchResult`; None when it has no usable URL."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    if not isinstance(url, str) or not url.strip():
        return None
    url = url.strip()
    title = item.get("title")
    content = item.get("content")
    date = item.get("published_date")
    return {
        "title": title.strip() if isinstance(title, str) and title.strip() else url,
        "url": url,
        "snippet": content.strip()[:SNIPPET_CHARS] if isinstance(content, str) else "",
        "source": SOURCE_NAME,
        "score": _score(item.get("score")),
        "date": date if isinstance(date, str) and date else None,
        "reference": f"docs:{url}",
        "attribution": None,
    }


class TavilyDocsSource:
    """Searches official documentation sites through Tavily. Safe to call concurrently."""

    name = SOURCE_NAME

    def __init__(
        self,
        api_key: str | None,
        *,
        domains: DocsDomains | None = None,
        domains_problem: str | None = None,
        policy: HttpPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api_key = api_key or None
        self._domains = domains if domains is not None else default_domains()
        self._domains_problem = domains_problem
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._http = SourceHttpClient(
            SOURCE_NAME,
            base_url=TAVILY_BASE_URL,
            headers=headers,
            secrets=[self._api_key],
            policy=policy,
            transport=transport,
            sleep=sleep,
            clock=clock,
        )

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> TavilyDocsSource:
        """Build from settings; a bad domains file makes the source skipped, not a crash."""
        key = settings.tavily_api_key.get_secret_value() if settings.tavily_api_key else None
        domains: DocsDomains | None = None
        problem: str | None = None
        try:
            domains = load_domains(settings.docs_domains)
        except DocsDomainsError as exc:
            # Falling back to the defaults would silently ignore the user's table.
            problem = str(exc)
            logger.warning("%s: %s", SOURCE_NAME, problem)
        policy = HttpPolicy.from_settings(settings)
        kwargs.setdefault("policy", policy)
        return cls(key, domains=domains, domains_problem=problem, **kwargs)

    @property
    def domains(self) -> DocsDomains:
        return self._domains

    @property
    def http_policy(self) -> HttpPolicy:
        return self._http.policy

    def status(self) -> SourceStatus:
        if not self._api_key:
            return SourceStatus("skipped", NO_KEY)
        if self._domains_problem:
            return SourceStatus("skipped", self._domains_problem)
        blocked = self._http.blocked_reason
        if blocked:
            return SourceStatus("skipped", blocked)
        return SourceStatus("ready")

    def request_body(self, query: str, limit: int) -> dict[str, Any]:
        """The JSON body sent to Tavily for `query` (domains chosen from the query)."""
        body: dict[str, Any] = {
            "query": clip_query(query),
            "search_depth": "basic",
            "max_results": max(1, min(limit, MAX_RESULTS)),
        }
        # From the whole query: a technology named past the clipping point still counts.
        domains = self._domains.domains_for(query)
        if domains:
            body["include_domains"] = domains
        return body

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        if not self._api_key:
            raise SourceUnavailable(NO_KEY)
        if self._domains_problem:
            raise SourceUnavailable(self._domains_problem)
        if limit <= 0 or not query.strip():
            return []
        body = self.request_body(query, limit)
        try:
            data = await self._http.post_json(SEARCH_PATH, body)
        except SourceUnavailable:
            raise
        except SourceError as exc:
            raise self._explain(exc) from None
        return self._results(data, limit)

    async def aclose(self) -> None:
        await self._http.aclose()

    def _explain(self, error: SourceError) -> SourceError:
        """A readable error for a Tavily status; keys and plan limits stop further calls."""
        status = http_status_of(error)
        known = _STATUS_MESSAGES.get(status) if status is not None else None
        if known is None or status is None:
            return error
        headline, stop = known
        if stop:
            # Another call cannot succeed before the user acts: skip without I/O until then.
            self._http.block(self._http.policy.cooldown, headline)
        # The client's text is already redacted; it carries Tavily's own `detail.error`.
        return SourceError(f"{headline} — {error}", kind=_STATUS_KINDS[status])

    def _results(self, data: object, limit: int) -> list[SearchResult]:
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SourceError(
                f"{SOURCE_NAME}: unexpected response from Tavily (no results list)",
                kind="bad_response",
            )
        mapped = [r for r in (to_search_result(item) for item in results) if r is not None]
        if len(mapped) < len(results):
            logger.debug(
                "%s: dropped %d results without a URL", SOURCE_NAME, len(results) - len(mapped)
            )
        return mapped[:limit]


@register_source(
    SOURCE_NAME,
    SourceInfo(probe_query="python json.loads", key="tavily_api_key", key_required=True),
)
def create_tavily_docs(settings: Settings) -> Source:
    return TavilyDocsSource.from_settings(settings)
