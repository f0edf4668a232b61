"""web: ddgs result mapping, its exceptions, the overall deadline and the breaker. No network:
the `DDGS` class the source uses is replaced by a fake. Throttling through ddgs's real code
paths is in `tests/unit/sources/test_web_throttle.py`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from ddgs.exceptions import DDGSException, TimeoutException
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.sources import web
from codeweaver.sources.base import SourceError, create_source
from codeweaver.sources.http import HttpPolicy, SourceUnavailable
from codeweaver.sources.web import WebSource, create_web

HITS: list[dict[str, Any]] = [
    {
        "title": "asyncio.gather — Python docs",
        "href": "https://docs.python.org/3/library/asyncio-task.html#asyncio.gather",
        "body": "Run awaitable objects in the aws sequence concurrently.",
    },
    {
        "title": "How to use asyncio.gather - Stack Overflow",
        "href": "https://stackoverflow.com/questions/42231161",
        "body": "gather returns results in the order of the awaitables.",
    },
    {
        "title": "Real Python: Async IO",
        "href": "https://realpython.com/async-io-python/",
        "body": "A walkthrough of async IO in Python.",
    },
]


Outcome = list[Any] | BaseException | Callable[[], Any]


class FakeDDGS:
    """Stands in for `ddgs.DDGS`; each `text` call pops the next planned outcome."""

    outcomes: ClassVar[list[Outcome]] = []
    calls: ClassVar[list[dict[str, Any]]] = []
    inits: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, statuses: list[tuple[str, int]], **kwargs: Any) -> None:
        FakeDDGS.inits.append(kwargs)

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        FakeDDGS.calls.append({"query": query, **kwargs})
        outcome = FakeDDGS.outcomes.pop(0) if FakeDDGS.outcomes else []
        if isinstance(outcome, BaseException):
            raise outcome
        if callable(outcome):
            result: list[dict[str, Any]] = outcome()
            return result
        return outcome


@pytest.fixture(autouse=True)
def fake_ddgs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[type[FakeDDGS]]:
    monkeypatch.chdir(tmp_path)  # no stray .env
    FakeDDGS.outcomes = []
    FakeDDGS.calls = []
    FakeDDGS.inits = []
    monkeypatch.setattr(web, "_RecordingDDGS", FakeDDGS)
    yield FakeDDGS


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def plan(*outcomes: Outcome) -> None:
    FakeDDGS.outcomes = list(outcomes)


# --------------------------------------------------------------------------- results


async def test_success_maps_ddgs_results() -> None:
    plan(HITS)
    results = await WebSource(timeout=4).search("python  asyncio gather", "learning", 5)

    assert [r["url"] for r in results] == [hit["href"] for hit in HITS]
    assert [r["title"] for r in results] == [hit["title"] for hit in HITS]
    assert [r["snippet"] for r in results] == [hit["body"] for hit in HITS]
    assert all(r["source"] == "web" and r["score"] is None for r in results)
    assert results[1]["reference"] == "web:https://stackoverflow.com/questions/42231161"

    call = FakeDDGS.calls[-1]
    assert call["query"] == "python asyncio gather"
    assert call["max_results"] == 5
    assert call["backend"] == web.DEFAULT_BACKEND
    assert FakeDDGS.inits[-1]["timeout"] == 4


async def test_limit_and_junk_items() -> None:
    plan([{"title": "no link", "body": "x"}, "not a dict", *HITS, {"href": "https://a.example/"}])
    results = await WebSource().search("python", "learning", 2)
    assert [r["url"] for r in results] == [HITS[0]["href"], HITS[1]["href"]]

    plan([{"title": " ", "href": "https://a.example/", "body": None}])
    (only,) = await WebSource().search("python", "learning", 5)
    assert only["title"] == "https://a.example/" and only["snippet"] == ""


async def test_an_empty_search_is_throttling_never_an_empty_success() -> None:
    # ddgs 9 turns a throttled engine into "no results" and raises when all are empty.
    plan([], DDGSException("No results found."))
    source = WebSource()
    with pytest.raises(SourceError, match="throttled") as caught:
        await source.search("zzqx frobnicate", "learning", 5)
    assert caught.value.kind == "throttled"
    assert source.status().state == "ready"  # one failure is not yet a pattern
    with pytest.raises(SourceError, match="throttled"):
        await source.search("zzqx frobnicate", "learning", 5)
    assert source.status().state == "skipped"  # counted by the breaker, never reset


async def test_the_query_is_cut_at_a_word_boundary_with_the_error_line_first() -> None:
    plan(HITS)
    post = "My loader breaks\nKeyError: 'id'\n" + "context words " * 100
    await WebSource().search(post, "debugging", 5)
    query = FakeDDGS.calls[-1]["query"]
    assert query.startswith("KeyError: 'id' My loader breaks")
    assert len(query) <= 300 and not query.endswith(" ")


async def test_nothing_to_search_does_not_call_ddgs() -> None:
    assert await WebSource().search("   ", "learning", 5) == []
    assert await WebSource().search("python", "learning", 0) == []
    assert FakeDDGS.calls == []


# --------------------------------------------------------------------------- errors


async def test_ddgs_timeout_exception() -> None:
    plan(TimeoutException("https://html.duckduckgo.com/html timed out"))
    with pytest.raises(SourceError, match="timed out"):
        await WebSource().search("python", "learning", 5)


async def test_slow_search_hits_the_overall_deadline() -> None:
    release = threading.Event()

    def hang() -> list[dict[str, Any]]:
        release.wait(5)
        return HITS

    plan(hang)
    started = time.monotonic()
    try:
        with pytest.raises(SourceError, match=r"timed out after 0\.05s"):
            await WebSource(timeout=0.05).search("python", "learning", 5)
    finally:
        release.set()  # let the worker thread finish
    assert time.monotonic() - started < 2


async def test_no_network_is_unavailable_and_stops_when_repeated() -> None:
    offline = DDGSException("ConnectError: ConnectError('dns error: failed to lookup address')")
    plan(offline, offline)
    source = WebSource()
    with pytest.raises(SourceUnavailable, match="network unreachable"):
        await source.search("python", "learning", 5)
    assert source.status().state == "ready"  # one blip does not block the web for minutes
    with pytest.raises(SourceUnavailable, match="network unreachable"):
        await source.search("python", "learning", 5)
    assert source.status().state == "skipped"
    with pytest.raises(SourceUnavailable):
        await source.search("python", "learning", 5)
    assert len(FakeDDGS.calls) == 2


async def test_other_failures_are_source_errors() -> None:
    plan(DDGSException("HTTPError: 403"), ValueError("lxml choked"))
    source = WebSource()
    with pytest.raises(SourceError, match="failed: HTTPError: 403"):
        await source.search("python", "learning", 5)
    with pytest.raises(SourceError, match="ValueError: lxml choked"):
        await source.search("python", "learning", 5)


# --------------------------------------------------------------------------- breaker


async def test_breaker_opens_after_two_failures_and_closes_after_cooldown() -> None:
    clock = Clock()
    source = WebSource(clock=clock)
    plan(DDGSException("No results found."), TimeoutException("timed out"), HITS)

    for _ in range(2):
        with pytest.raises(SourceError):
            await source.search("python", "learning", 5)
    assert source.status().state == "skipped"
    assert "skipped after 2 failures" in source.status().reason
    with pytest.raises(SourceUnavailable, match="skipped after 2 failures"):
        await source.search("python", "learning", 5)
    assert len(FakeDDGS.calls) == 2  # the third call never reached ddgs

    clock.now += HttpPolicy().cooldown + 1
    assert source.status().state == "ready"
    assert len(await source.search("python", "learning", 5)) == 3


async def test_success_resets_the_failure_count() -> None:
    plan(TimeoutException("timed out"), HITS, TimeoutException("timed out"), HITS)
    source = WebSource()
    for outcome_is_error in (True, False, True, False):
        if outcome_is_error:
            with pytest.raises(SourceError):
                await source.search("python", "learning", 5)
        else:
            assert await source.search("python", "learning", 5)
    assert source.status().state == "ready"


async def test_breaker_thresholds_follow_the_policy() -> None:
    source = WebSource(policy=HttpPolicy(failures_to_open=3))
    plan(*[TimeoutException("timed out")] * 3)
    for _ in range(2):
        with pytest.raises(SourceError):
            await source.search("python", "learning", 5)
    assert source.status().state == "ready"
    with pytest.raises(SourceError):
        await source.search("python", "learning", 5)
    assert source.status().state == "skipped"


# --------------------------------------------------------------------------- factory


def test_factory_is_ready_without_keys_and_uses_http_timeout() -> None:
    settings = Settings(http_timeout=2.5, tavily_api_key=SecretStr("unused"))
    source = create_web(settings)
    assert isinstance(source, WebSource)
    assert source.timeout == 2.5
    assert source.status().state == "ready"
    assert isinstance(create_source("web", settings), WebSource)
