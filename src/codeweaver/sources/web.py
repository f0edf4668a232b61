"""`web`: general web search through the `ddgs` metasearch package (DuckDuckGo first), no key.

`ddgs` is synchronous and does its own HTTP, so it runs in a worker thread under an overall
`asyncio.wait_for` deadline. Its errors become `SourceError`/`SourceUnavailable` with a
readable reason, and a small breaker stops calling it after repeated failures.

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

from ddgs import DDGS
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from codeweaver.agent.state import Intent, SearchResult
from codeweaver.config import Settings
from codeweaver.sources.base import Source, SourceError, SourceStatus, register_source
from codeweaver.sources.http import HttpPolicy, SourceUnavailable

logger = logging.getLogger(__name__)

SOURCE_NAME = "web"
SNIPPET_CHARS = 1200
#: General-purpose engines only. `ddgs`'s "auto" puts Wikipedia and Grokipedia first, whose
#: encyclopedia pages crowd out programming pages for developer questions.
DEFAULT_BACKEND = "duckduckgo,brave,startpage,mojeek"

# `ddgs` wraps transport errors as "<ExceptionName>: ..."; these mean no network at all.
_NETWORK_MARKERS = ("connecterror", "dnserror", "network is unreachable", "connection refused")
_NO_RESULTS = "no results found"


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
        query = " ".join(query.split())
        if limit <= 0 or not query:
            return []
        try:
            # The thread cannot be cancelled: on timeout it finishes in the background,
            # bounded by ddgs's own per-request timeout.
            raw = await asyncio.wait_for(
                asyncio.to_thread(self._text, query, limit), timeout=self.timeout
            )
        except TimeoutError:
            raise self._failed(f"timed out after {self.timeout:g}s") from None
        except RatelimitException:
            raise self._failed("rate-limited by the search engines; try again later") from None
        except TimeoutException as exc:
            raise self._failed(f"timed out ({_short(exc)})") from None
        except DDGSException as exc:
            text = str(exc)
            if _NO_RESULTS in text.lower():
                # ddgs reports an empty result list as an exception.
                self._breaker.success()
                return []
            if any(marker in text.lower() for marker in _NETWORK_MARKERS):
                # Unreachable: like the shared client, stop at once instead of waiting again.
                reason = f"network unreachable ({_short(exc)})"
                self._breaker.open(f"skipped: {reason}")
                raise SourceUnavailable(f"web search: {reason}") from None
            raise self._failed(f"failed: {_short(exc)}") from None
        except Exception as exc:  # third-party scraping code: any bug is a failure
            raise self._failed(f"failed: {type(exc).__name__}: {_short(exc)}") from None
        self._breaker.success()
        results = [r for r in (to_search_result(item) for item in raw or []) if r is not None]
        return results[:limit]

    def _text(self, query: str, limit: int) -> list[dict[str, Any]]:
        # ddgs takes whole seconds; the outer wait_for enforces the exact deadline.
        ddgs = DDGS(timeout=max(1, math.ceil(self.timeout)))
        results: list[dict[str, Any]] = ddgs.text(query, max_results=limit, backend=self.backend)
        return results

    def _failed(self, reason: str) -> SourceError:
        self._breaker.failure(reason)
        logger.info("%s: %s", SOURCE_NAME, reason)
        return SourceError(f"web search {reason}")


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


@register_source(SOURCE_NAME)
def create_web(settings: Settings) -> Source:
    return WebSource.from_settings(settings)
