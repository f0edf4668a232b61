"""`web`: general web search through the `ddgs` metasearch package (DuckDuckGo first), no key.

`ddgs` is synchronous and does its own HTTP, so it runs in a worker thread under an overall
`asyncio.wait_for` deadline. Its errors become `SourceError`/`SourceUnavailable` with a
readable reason, and a small breaker stops calling it after repeated failures.

Throttling: ddgs 9 never raises its rate-limit exception. An engine that answers 202 (the
DuckDuckGo anomaly page), 403 or 429 is read as "no results", and when no engine returns
anything it raises "No results found". So each engine's HTTP status is recorded
(`_RecordingDDGS`), and a search that comes back empty is reported as throttled (a developer
question never has no web result at all on four general engines): a `SourceError` of kind
`throttled`, counted by the breaker, never an empty success.

The query is at most 300 characters, cut at a word boundary, the error line first.

Why not `SourceHttpClient`'s breaker: there it is the private bookkeeping of an httpx client
(`_record`), and `ddgs` never goes through httpx. `Breaker` below is the same rule with the
same thresholds (`HttpPolicy.failures_to_open`, `HttpPolicy.cooldown`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from ddgs.base import BaseSearchEngine
from ddgs.ddgs import DDGS  # the real class: `ddgs.DDGS` is a lazy proxy
from ddgs.exceptions import DDGSException, TimeoutException

from codeweaver.config import Settings
from codeweaver.sources.base import (
    FailureKind,
    Source,
    SourceError,
    SourceInfo,
    SourceStatus,
    register_source,
)
from codeweaver.sources.http import HttpPolicy, SourceUnavailable
from codeweaver.sources.query_shapes import web_query
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

SOURCE_NAME = "web"
SNIPPET_CHARS = 1200
#: General-purpose engines only. `ddgs`'s "auto" puts Wikipedia and Grokipedia first, whose
#: encyclopedia pages crowd out programming pages for developer questions.
DEFAULT_BACKEND = "duckduckgo,brave,startpage,mojeek"

# `ddgs` wraps transport errors as "<ExceptionName>: ..."; these mean no network at all.
_NETWORK_MARKERS = ("connecterror", "dnserror", "network is unreachable", "connection refused")
_NO_RESULTS = "no results found"
THROTTLE_STATUSES = frozenset({202, 403, 429})


class _RecordingDDGS(DDGS):
    """`DDGS` that notes each engine's HTTP status, which ddgs itself discards.

    Relies on `DDGS._get_engines` and `BaseSearchEngine.http_client` of the pinned ddgs 9.16.1;
    the tests drive it through ddgs's real code with a fake HTTP client."""

    def __init__(self, statuses: list[tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._statuses = statuses

    def _get_engines(self, category: str, backend: str) -> list[BaseSearchEngine[Any]]:
        engines = super()._get_engines(category, backend)
        for engine in engines:
            client = engine.http_client
            if getattr(client, "_codeweaver_recorded", False):
                continue  # engines are cached per instance: wrap each once
            client.request = self._recording(engine.name, client.request)  # type: ignore[method-assign]
            client._codeweaver_recorded = True  # type: ignore[attr-defined]
        return engines

    def _recording(self, name: str, request: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            response = request(*args, **kwargs)
            self._statuses.append((name, int(response.status_code)))
            return response

        return recorded


class Breaker:
    """Opens after `failures_to_open` consecutive failures; skips calls for `cooldown` s."""

    def __init__(
        self,
        failures_to_open: int,
        cooldown: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures_to_open = failures_to_open
        self.cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._open_until = 0.0
        self._reason = ""

    @property
    def blocked_reason(self) -> str | None:
        return self._reason if self._clock() < self._open_until else None

    def open(self, reason: str) -> None:
        self._open_until = self._clock() + self.cooldown
        self._reason = reason

    def success(self) -> None:
        self._failures = 0

    def failure(self, reason: str) -> None:
        self._failures += 1
        if self._failures >= self.failures_to_open:
            self.open(f"skipped after {self._failures} failures: {reason}")


def to_search_result(item: object) -> SearchResult | None:
    """One `ddgs` text result (``title``, ``href``, ``body``) as a `SearchResult`."""
    if not isinstance(item, dict):
        return None
    url = item.get("href")
    if not isinstance(url, str) or not url.strip():
        return None
    url = url.strip()
    title = item.get("title")
    body = item.get("body")
    return {
        "title": title.strip() if isinstance(title, str) and title.strip() else url,
        "url": url,
        "snippet": body.strip()[:SNIPPET_CHARS] if isinstance(body, str) else "",
        "source": SOURCE_NAME,
        "score": None,  # search engines give a rank, not a relevance score
        "reference": f"web:{url}",
        "attribution": None,
    }


class WebSource:
    """Keyless web search. Safe to call concurrently (one `DDGS` per call)."""

    name = SOURCE_NAME

    def __init__(
        self,
        *,
        timeout: float = 8.0,
        backend: str = DEFAULT_BACKEND,
        policy: HttpPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.timeout = timeout
        self.backend = backend
        policy = policy or HttpPolicy()
        self._breaker = Breaker(policy.failures_to_open, policy.cooldown, clock)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> WebSource:
        kwargs.setdefault("timeout", settings.http_timeout)
        return cls(**kwargs)

    @property
    def breaker(self) -> Breaker:
        return self._breaker

    def status(self) -> SourceStatus:
        blocked = self._breaker.blocked_reason
        return SourceStatus("skipped", blocked) if blocked else SourceStatus("ready")

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        blocked = self._breaker.blocked_reason
        if blocked:
            raise SourceUnavailable(blocked)
        query = web_query(query)
        if limit <= 0 or not query:
            return []
        statuses: list[tuple[str, int]] = []
        try:
            # The thread cannot be cancelled: on timeout it finishes in the background,
            # bounded by ddgs's own per-request timeout.
            raw = await asyncio.wait_for(
                asyncio.to_thread(self._text, query, limit, statuses), timeout=self.timeout
            )
        except TimeoutError:
            raise self._failed(f"timed out after {self.timeout:g}s", "timeout") from None
        except TimeoutException as exc:
            raise self._failed(f"timed out ({_short(exc)})", "timeout") from None
        except DDGSException as exc:
            text = str(exc)
            # ddgs reports the last engine's error: the others may have been refused.
            refused = any(code in THROTTLE_STATUSES for _, code in statuses)
            if refused or _NO_RESULTS in text.lower():
                raise self._failed(_throttled(statuses), "throttled") from None
            if any(marker in text.lower() for marker in _NETWORK_MARKERS):
                reason = f"network unreachable ({_short(exc)})"
                self._breaker.failure(reason)
                raise SourceUnavailable(f"web search: {reason}", kind="network") from None
            raise self._failed(f"failed: {_short(exc)}", "http") from None
        except Exception as exc:  # third-party scraping code: any bug is a failure
            raise self._failed(f"failed: {type(exc).__name__}: {_short(exc)}", None) from None
        results = [r for r in (to_search_result(item) for item in raw or []) if r is not None]
        if not results:
            raise self._failed(_throttled(statuses), "throttled")
        self._breaker.success()
        return results[:limit]

    def _text(self, query: str, limit: int, statuses: list[tuple[str, int]]) -> list[Any]:
        # ddgs takes whole seconds; the outer wait_for enforces the exact deadline.
        ddgs = _RecordingDDGS(statuses, timeout=max(1, math.ceil(self.timeout)))
        results: list[Any] = ddgs.text(query, max_results=limit, backend=self.backend)
        return results

    def _failed(self, reason: str, kind: FailureKind | None) -> SourceError:
        self._breaker.failure(reason)
        logger.info("%s: %s", SOURCE_NAME, reason)
        return SourceError(f"web search {reason}", kind=kind)


def _throttled(statuses: list[tuple[str, int]]) -> str:
    """Why an empty search is read as throttling, naming the statuses seen."""
    refused = [f"{name} HTTP {code}" for name, code in statuses if code in THROTTLE_STATUSES]
    if refused:
        return "throttled by the search engines (" + ", ".join(refused) + "); try again later"
    return "throttled: no engine returned any result; try again later"


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


@register_source(SOURCE_NAME, SourceInfo(probe_query="python list comprehension"))
def create_web(settings: Settings) -> Source:
    return WebSource.from_settings(settings)
