"""web: throttling seen through ddgs 9.16.1's real code paths. Only its HTTP client (primp)
is replaced by a fake that answers per engine host, as the engines' servers would."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
from ddgs import http_client

from codeweaver.sources.base import SourceError
from codeweaver.sources.web import DEFAULT_BACKEND, WebSource

# DuckDuckGo's HTML endpoint: one result in the shape its engine's XPaths read.
DDG_RESULTS = """<html><body>
<div class="result results_links web-result"><div class="links_main result__body">
<h2 class="result__title"><a href="https://docs.python.org/3/library/asyncio-task.html">
asyncio.gather — Python docs</a></h2>
<a class="result__snippet" href="https://docs.python.org/3/library/asyncio-task.html">
Run awaitable objects in the aws sequence concurrently with asyncio gather.</a>
</div></div></body></html>"""
ANOMALY = "<html><body>If this error persists, please let us know.</body></html>"
EMPTY_PAGE = "<html><body><p>No results.</p></body></html>"


@dataclass
class FakeResponse:
    status_code: int
    text: str

    @property
    def content(self) -> bytes:
        return self.text.encode()


class FakePrimpClient:
    """Stands in for `primp.Client`: `answers[host]` is the (status, body) that host gives."""

    answers: ClassVar[dict[str, tuple[int, str]]] = {}
    hosts: ClassVar[list[str]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def headers_update(self, headers: Any) -> None:
        pass

    def set_cookies(self, url: str, cookies: Any) -> None:
        pass

    def request(self, method: str, url: str, **kwargs: Any) -> FakeResponse:
        host = urlsplit(url).hostname or ""
        FakePrimpClient.hosts.append(host)
        status, body = FakePrimpClient.answers.get(host, (200, EMPTY_PAGE))
        return FakeResponse(status, body)


_set_cookies = FakePrimpClient.set_cookies


@pytest.fixture(autouse=True)
def fake_primp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    FakePrimpClient.answers = {}
    FakePrimpClient.hosts = []
    monkeypatch.setattr(http_client.primp, "Client", FakePrimpClient)
    yield


def answer_all(status: int, body: str) -> None:
    for host in (
        "html.duckduckgo.com",
        "search.brave.com",
        "www.startpage.com",
        "www.mojeek.com",
    ):
        FakePrimpClient.answers[host] = (status, body)


async def test_engines_answering_202_403_429_are_throttled_not_empty() -> None:
    answer_all(429, "Too Many Requests")
    FakePrimpClient.answers["html.duckduckgo.com"] = (202, ANOMALY)
    FakePrimpClient.answers["www.mojeek.com"] = (403, "Forbidden")
    source = WebSource(timeout=5)

    with pytest.raises(SourceError) as caught:
        await source.search("python asyncio gather", "learning", 5)

    assert caught.value.kind == "throttled"
    message = str(caught.value)
    assert "throttled by the search engines" in message
    assert "duckduckgo HTTP 202" in message and "mojeek HTTP 403" in message
    assert FakePrimpClient.hosts, "ddgs made no request: the test did not reach its HTTP code"
    # Not reset as a success: a second throttled search opens the breaker.
    with pytest.raises(SourceError):
        await source.search("python asyncio gather", "learning", 5)
    assert source.status().state == "skipped"


async def test_a_failing_engine_does_not_hide_the_others_refusals() -> None:
    answer_all(429, "Too Many Requests")
    del FakePrimpClient.set_cookies  # brave and mojeek now fail inside ddgs
    try:
        with pytest.raises(SourceError) as caught:
            await WebSource(timeout=5).search("python asyncio gather", "learning", 5)
    finally:
        FakePrimpClient.set_cookies = _set_cookies  # type: ignore[method-assign]
    assert caught.value.kind == "throttled"


async def test_engines_answering_200_with_no_results_are_throttled() -> None:
    answer_all(200, EMPTY_PAGE)
    with pytest.raises(SourceError, match="no engine returned any result") as caught:
        await WebSource(timeout=5).search("python asyncio gather", "learning", 5)
    assert caught.value.kind == "throttled"


async def test_one_engine_answering_is_a_success_and_resets_the_breaker() -> None:
    answer_all(429, "Too Many Requests")
    source = WebSource(timeout=5)
    with pytest.raises(SourceError):
        await source.search("python asyncio gather", "learning", 5)

    FakePrimpClient.answers["html.duckduckgo.com"] = (200, DDG_RESULTS)
    results = await source.search("python asyncio gather", "learning", 5)

    assert [r["url"] for r in results] == ["https://docs.python.org/3/library/asyncio-task.html"]
    assert results[0]["title"] == "asyncio.gather — Python docs"
    # The earlier failure was forgotten: one more throttled search does not open the breaker.
    answer_all(429, "Too Many Requests")
    with pytest.raises(SourceError):
        await source.search("python asyncio gather", "learning", 5)
    assert source.status().state == "ready"


def test_the_default_backend_is_the_engines_answered_here() -> None:
    assert DEFAULT_BACKEND.split(",") == ["duckduckgo", "brave", "startpage", "mojeek"]
