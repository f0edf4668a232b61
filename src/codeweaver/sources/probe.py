"""Live checks of the online sources: one real search each, and why it failed if it did.

`probe` runs one search with a fixed query and measures it (`search_safely` says why it
failed); `probe_sources` checks every online source the settings enable, concurrently.
Which sources are checked, with which query, and the key each cannot run without are
declared where each source registers (`SourceInfo`); offline ones are never probed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from codeweaver.sources.base import (
    FailureKind,
    Source,
    SourceInfo,
    create_source,
    source_infos,
)
from codeweaver.sources.calling import Failed, search_safely
from codeweaver.sources.keys import secret_is_set

if TYPE_CHECKING:
    from codeweaver.config import Settings

PROBE_LIMIT = 5

ProbeResult = Literal["ok", "failed", "not configured", "disabled"]


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


def probed_sources() -> dict[str, SourceInfo]:
    """The registered sources `doctor --live` checks: those with a probe query."""
    return {name: info for name, info in source_infos().items() if info.probe_query}


async def probe(source: Source, query: str, timeout: float) -> ProbeReport:
    """Search `source` once for `query`, within `timeout` seconds overall (retries included)."""
    quota = _quota(source)
    outcome = await search_safely(source, query, "learning", PROBE_LIMIT, timeout=timeout)
    if isinstance(outcome, Failed):
        return ProbeReport(
            source.name,
            "failed",
            latency=outcome.seconds,
            quota_left=quota(),
            kind=outcome.kind,
            reason=outcome.diagnosis,
            query=query,
        )
    # A fixed query with no results is suspicious (a silent throttle), but not a failure.
    note = "" if outcome.results else "answered, but with no results"
    return ProbeReport(
        source.name,
        "ok",
        latency=outcome.seconds,
        results=len(outcome.results),
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


async def probe_sources(settings: Settings, timeout: float | None = None) -> list[ProbeReport]:
    """Check every online source, in name order; disabled or keyless ones are not called."""
    settings = live_settings(settings)
    limit = deadline(settings) if timeout is None else timeout
    reports: dict[str, ProbeReport] = {}
    to_probe: dict[str, Source] = {}
    queries: dict[str, str] = {}
    for name, info in probed_sources().items():
        if not settings.source_enabled(name):
            reports[name] = ProbeReport(name, "disabled", reason="disabled by CODEWEAVER_SOURCES")
        elif info.key_required and info.key and not secret_is_set(settings, info.key):
            reason = f"{info.key.upper()} not set"
            reports[name] = ProbeReport(name, "not configured", reason=reason)
        else:
            to_probe[name] = create_source(name, settings)
            queries[name] = info.probe_query or ""
    try:
        checked = await asyncio.gather(*(probe(s, queries[n], limit) for n, s in to_probe.items()))
    finally:
        for source in to_probe.values():
            close = getattr(source, "aclose", None)
            if callable(close):
                await close()
    reports.update(zip(to_probe, checked, strict=True))
    return [reports[name] for name in sorted(reports)]
