"""One way to call a source: a search within a deadline that never raises.

Every door (the search nodes, the librarian's tools, the MCP tools, `doctor --live`)
searches through `search_safely`, which gives `Found` or `Failed`: the failure's
`FailureKind` (read by `classify` off whatever the search raised) and the text the door
shows. So one failure reads the same at every door.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from dataclasses import dataclass
from typing import cast, get_args

import httpx

from codeweaver.sources.base import FailureKind, Source, SourceError
from codeweaver.sources.http import HttpStatusError, connect_kind
from codeweaver.telemetry import source_span
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    """A search that answered (perhaps with nothing)."""

    source: str
    results: list[SearchResult]
    seconds: float


@dataclass(frozen=True)
class Failed:
    """A search that did not answer, and why."""

    source: str
    kind: FailureKind | None  # None when nothing says why
    # Why, without the source's name: `timed out after 30s`, or the error's text (its type
    # first when it is not a `SourceError`, which no source raises on purpose).
    reason: str
    diagnosis: str  # for an operator: the kind's label and the error's text (`classify`)
    error: BaseException
    seconds: float

    @property
    def text(self) -> str:
        """What users and the model are told: `github failed: …`, `web timed out after 30s`."""
        if isinstance(self.error, TimeoutError):
            return f"{self.source} {self.reason}"
        return f"{self.source} failed: {self.reason}"


async def search_safely(
    source: Source, query: str, intent: Intent, limit: int, *, timeout: float
) -> Found | Failed:
    """Search `source` within `timeout` seconds (its retries included); a failure is a
    `Failed`, never an exception (a failing source never fails the answer)."""
    start = time.perf_counter()
    try:
        with source_span(source.name, query) as traced:  # a span when tracing is on
            results = await asyncio.wait_for(source.search(query, intent, limit), timeout)
            traced.found(len(results))
    except TimeoutError as exc:
        reason = f"timed out after {timeout:g}s"
        logger.info("%s %s", source.name, reason)
        seconds = time.perf_counter() - start
        return Failed(source.name, "timeout", reason, f"timeout: {reason}", exc, seconds)
    except Exception as exc:  # whatever it was, the door reports it and goes on
        if isinstance(exc, SourceError):
            logger.info("%s failed: %s", source.name, exc)
        else:
            logger.exception("%s failed", source.name)
        kind, diagnosis = classify(exc)
        reason = _text(exc) if isinstance(exc, SourceError) else _named(exc)
        return Failed(source.name, kind, reason, diagnosis, exc, time.perf_counter() - start)
    return Found(source.name, results, time.perf_counter() - start)


_KINDS: frozenset[str] = frozenset(get_args(FailureKind))

LABELS: dict[FailureKind | None, str] = {
    "auth": "bad key",
    "rate_limited": "rate-limited",
    "throttled": "throttled",
    "dns": "DNS failure",
    "tls": "TLS failure",
    "timeout": "timeout",
    "network": "network error",
    "http": "HTTP error",
    "bad_response": "unexpected response",
    None: "error",
}


def _text(exc: BaseException) -> str:
    """The error's text on one line (its type's name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def _named(exc: BaseException) -> str:
    """The error's type and text: `KeyError: 'items'`."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it wraps, outermost first (bounded: chains can be cyclic)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _kind_from_status(status: int) -> FailureKind:
    if status == 401:
        return "auth"
    # 403/429: GitHub and most APIs; 432/433: Tavily's plan and pay-as-you-go limits.
    if status in (403, 429, 432, 433):
        return "rate_limited"
    return "http"


def _kind_from_cause(exc: BaseException) -> FailureKind | None:
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return "timeout"
    if isinstance(exc, httpx.TransportError):
        return connect_kind(exc)
    if isinstance(exc, ssl.SSLError):
        return "tls"
    if isinstance(exc, OSError) and "getaddrinfo" in f"{type(exc).__name__} {exc}".lower():
        return "dns"
    return None


# Checked in this order: a throttle message may also say "too many requests".
_TEXT_KINDS: tuple[tuple[FailureKind, re.Pattern[str]], ...] = (
    ("throttled", re.compile(r"throttl")),
    (
        "auth",
        re.compile(
            r"\b401\b|unauthori[sz]ed|bad credentials|invalid\b.*(key|token)|"
            r"(key|token)\b.*\brejected"
        ),
    ),
    ("rate_limited", re.compile(r"rate.?limit|quota|too many requests|limit exceeded")),
    (
        "dns",
        re.compile(
            r"name or service not known|nodename nor servname|temporary failure in name "
            r"resolution|getaddrinfo|does not resolve|name resolution"
        ),
    ),
    ("tls", re.compile(r"\bssl|\btls\b|certificate")),
    ("timeout", re.compile(r"timed out|timeout")),
    ("network", re.compile(r"network|connection (refused|reset)|unreachable")),
    ("http", re.compile(r"\bhttp \d{3}\b")),
)


def classify(exc: BaseException) -> tuple[FailureKind | None, str]:
    """Why a search failed: the kind (None when unknown) and a reason with the error text.

    In order: the error's own `kind`, the HTTP status, the wrapped httpx/OS error, the text.
    """
    message = _text(exc)
    # The whole chain counts: a source may re-raise the client's error with a better text.
    chain = _chain(exc)
    declared = (getattr(e, "kind", None) for e in chain if isinstance(e, SourceError))
    kind = next((cast(FailureKind, k) for k in declared if k in _KINDS), None)
    if kind is None:
        status = next((e.status_code for e in chain if isinstance(e, HttpStatusError)), None)
        kind = _kind_from_status(status) if status is not None else None
    if kind is None:
        kind = next((k for k in map(_kind_from_cause, chain) if k is not None), None)
    if kind is None:
        text = " ".join(f"{type(e).__name__} {e}" for e in chain).lower()
        kind = next((k for k, pattern in _TEXT_KINDS if pattern.search(text)), None)
    if kind is None and not isinstance(exc, RuntimeError):
        message = _named(exc)  # a bug, not a source error: name it
    return kind, f"{LABELS[kind]}: {message}"
