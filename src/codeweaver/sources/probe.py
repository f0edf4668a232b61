"""Live checks of the online sources: one real search each, and why it failed if it did.

`probe` runs one search with a fixed query and measures it; `classify` turns whatever the
search raised into a `FailureKind` and a readable reason; `probe_sources` checks every
online source the settings enable, concurrently. `ONLINE_SOURCES` names the sources that
call a service over the network (the others read local files and are never probed), the
query each is checked with, and the key each cannot run without.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import httpx
from pydantic import SecretStr

from codeweaver.sources.base import (
    FailureKind,
    Source,
    SourceError,
    create_source,
    source_names,
)
from codeweaver.sources.http import HttpStatusError, connect_kind

if TYPE_CHECKING:
    from codeweaver.config import Settings


@dataclass(frozen=True)
class OnlineSource:
    """How one online source is checked."""

    query: str  # a query the service surely has results for
    key: str | None = None  # the `Settings` secret the source cannot run without


ONLINE_SOURCES: dict[str, OnlineSource] = {
    "stackoverflow": OnlineSource("python list comprehension"),
    # Code search needs an identifier: a prose-only query builds no search at all.
    "github": OnlineSource("json.loads in Python", key="github_token"),
    # Issue search needs an error line or an identifier too; it runs without a token.
    "github_issues": OnlineSource("AttributeError: 'DataFrame' object has no attribute 'append'"),
    "tavily_docs": OnlineSource("python json.loads", key="tavily_api_key"),
    "web": OnlineSource("python list comprehension"),
}

PROBE_LIMIT = 5

ProbeResult = Literal["ok", "failed", "not configured", "disabled"]

_KINDS: frozenset[str] = frozenset(get_args(FailureKind))

_LABELS: dict[FailureKind | None, str] = {
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


@dataclass(frozen=True)
class ProbeReport:
    """The outcome of checking one source."""

    source: str
    result: ProbeResult
    latency: float | None = None  # seconds, for a source that was called
    results: int | None = None
    quota_left: str | None = None
    kind: FailureKind | None = None
    reason: str = ""
    query: str = ""

    @property
    def ok(self) -> bool:
        return self.result == "ok"

    @property
    def failed(self) -> bool:
        return self.result == "failed"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


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
    message = " ".join(str(exc).split()) or type(exc).__name__
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
        message = f"{type(exc).__name__}: {message}"  # a bug, not a source error: name it
    return kind, f"{_LABELS[kind]}: {message}"


async def probe(source: Source, query: str, timeout: float) -> ProbeReport:
    """Search `source` once for `query`, within `timeout` seconds overall (retries included)."""
    quota = _quota(source)
    start = time.perf_counter()
    try:
        results = await asyncio.wait_for(
            source.search(query, "learning", PROBE_LIMIT), timeout=timeout
        )
    except TimeoutError:
        return ProbeReport(
            source.name,
            "failed",
            latency=time.perf_counter() - start,
            quota_left=quota(),
            kind="timeout",
            reason=f"timeout: no answer within {timeout:g}s",
            query=query,
        )
    except Exception as exc:  # any failure is the report's subject, not a crash
        kind, reason = classify(exc)
        return ProbeReport(
            source.name,
            "failed",
            latency=time.perf_counter() - start,
            quota_left=quota(),
            kind=kind,
            reason=reason,
            query=query,
        )
    latency = time.perf_counter() - start
    # A fixed query with no results is suspicious (a silent throttle), but not a failure.
    note = "" if results else "answered, but with no results"
    return ProbeReport(
        source.name,
        "ok",
        latency=latency,
        results=len(results),
        quota_left=quota(),
        reason=note,
        query=query,
    )


def _quota(source: Source) -> Callable[[], str | None]:
    """A callable giving the source's quota left, or None for a source that knows none."""
    quota_left = getattr(source, "quota_left", None)
    if not callable(quota_left):
        return lambda: None

    def read() -> str | None:
        value = quota_left()
        return value if isinstance(value, str) else None

    return read


def deadline(settings: Settings) -> float:
    """Seconds one probe may take: a search may make up to three requests in a row."""
    return 3 * settings.http_timeout + settings.connect_timeout


def live_settings(settings: Settings) -> Settings:
    """`settings` without the HTTP cache: a cached answer says nothing about the service."""
    return settings.model_copy(update={"http_cache": False})


def _has_secret(settings: Settings, field: str) -> bool:
    # An empty value counts as unset, as the sources themselves treat it.
    value = getattr(settings, field, None)
    return isinstance(value, SecretStr) and bool(value.get_secret_value())


async def probe_sources(settings: Settings, timeout: float | None = None) -> list[ProbeReport]:
    """Check every online source, in name order; disabled or keyless ones are not called."""
    settings = live_settings(settings)
    limit = deadline(settings) if timeout is None else timeout
    reports: dict[str, ProbeReport] = {}
    to_probe: dict[str, Source] = {}
    for name in source_names():
        spec = ONLINE_SOURCES.get(name)
        if spec is None:
            continue  # an offline source: nothing to check over the network
        if not settings.source_enabled(name):
            reports[name] = ProbeReport(name, "disabled", reason="disabled by CODEWEAVER_SOURCES")
        elif spec.key is not None and not _has_secret(settings, spec.key):
            reason = f"{spec.key.upper()} not set"
            reports[name] = ProbeReport(name, "not configured", reason=reason)
        else:
            to_probe[name] = create_source(name, settings)
    try:
        checked = await asyncio.gather(
            *(probe(s, ONLINE_SOURCES[n].query, limit) for n, s in to_probe.items())
        )
    finally:
        for source in to_probe.values():
            close = getattr(source, "aclose", None)
            if callable(close):
                await close()
    reports.update(zip(to_probe, checked, strict=True))
    return [reports[name] for name in sorted(reports)]
