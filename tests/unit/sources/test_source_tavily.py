"""tavily_docs: request shape, result mapping, Tavily's status codes, retries, redaction.

Responses are recorded in Tavily's documented shape under tests/fixtures/tavily/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.sources.base import SourceError, create_source
from codeweaver.sources.http import HttpPolicy, SourceUnavailable
from codeweaver.sources.tavily_docs import (
    MAX_QUERY_CHARS,
    TavilyDocsSource,
    clip_query,
    create_tavily_docs,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tavily"
SEARCH_URL = "https://api.tavily.com/search"
KEY = "tvly-dev-S3cr3tK3y0123456789abcdef"


def fixture_json(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def reply(status: int, name: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=fixture_json(name), headers=headers)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_source(
    sleeps: Sleeps | None = None, key: str | None = KEY, clock: Clock | None = None
) -> TavilyDocsSource:
    return TavilyDocsSource(
        key,
        policy=HttpPolicy(timeout=5.0, connect_timeout=1.0),
        sleep=sleeps or Sleeps(),
        clock=clock or Clock(),
    )


def sent_body(route: respx.Route) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls.last.request.content)
    return body


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TAVILY_API_KEY", "CODEWEAVER_DOCS_DOMAINS", "CODEWEAVER_HTTP_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def settings(**values: Any) -> Settings:
    return Settings(**values)


# --------------------------------------------------------------------------- success


async def test_success_maps_documented_results(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_success.json"))
    results = await make_source().search("python asyncio gather", "learning", 5)

    recorded = fixture_json("search_success.json")["results"]
    assert [r["url"] for r in results] == [item["url"] for item in recorded]
    assert [r["title"] for r in results] == [item["title"] for item in recorded]
    assert [r["snippet"] for r in results] == [item["content"] for item in recorded]
    assert [r["score"] for r in results] == [item["score"] for item in recorded]
    assert all(r["source"] == "tavily_docs" for r in results)
    assert results[0]["reference"] == "docs:https://docs.python.org/3/library/asyncio-task.html"
    # General-topic results carry no `published_date` (Tavily sends it for news only).
    assert all(r["date"] is None for r in results)

    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = sent_body(route)
    assert body["query"] == "python asyncio gather"
    assert body["search_depth"] == "basic"
    assert body["max_results"] == 5
    assert body["include_domains"] == ["docs.python.org"]


async def test_results_are_cut_to_limit_and_max_results_follows_it(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_success.json"))
    results = await make_source().search("python asyncio", "learning", 2)
    assert len(results) == 2
    assert sent_body(route)["max_results"] == 2


async def test_scores_are_clamped_and_junk_results_dropped(respx_mock: respx.MockRouter) -> None:
    data = fixture_json("search_success.json")
    data["results"][0]["score"] = 1.7
    data["results"][1]["score"] = -0.25
    data["results"][2]["score"] = "high"
    data["results"].append({"title": "no url", "content": "x", "score": 0.5})
    data["results"].append({"title": "", "url": "https://docs.python.org/3/", "score": 0.2})
    respx_mock.post(SEARCH_URL).mock(return_value=httpx.Response(200, json=data))

    results = await make_source().search("python", "learning", 10)

    assert [r["score"] for r in results] == [1.0, 0.0, None, 0.2]
    assert results[-1]["title"] == "https://docs.python.org/3/"  # empty title → the URL
    assert results[-1]["snippet"] == ""


async def test_empty_results(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_empty.json"))
    assert await make_source().search("zzqx frobnicate the quux", "learning", 5) == []
    assert route.call_count == 1


# --------------------------------------------------------------------------- domains


@pytest.mark.parametrize(
    ("question", "domains"),
    [
        ("pandas groupby inside a FastAPI endpoint", ["pandas.pydata.org", "fastapi.tiangolo.com"]),
        ("리액트에서 useEffect 정리 함수", ["react.dev"]),
        ("k8s readiness probe for a docker image", ["kubernetes.io", "docs.docker.com"]),
    ],
)
async def test_include_domains_come_from_the_question(
    respx_mock: respx.MockRouter, question: str, domains: list[str]
) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_empty.json"))
    await make_source().search(question, "learning", 5)
    assert sent_body(route)["include_domains"] == domains


async def test_question_without_technology_uses_the_general_set(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_empty.json"))
    source = make_source()
    await source.search("what is a monad", "learning", 5)
    domains = sent_body(route)["include_domains"]
    assert domains == list(source.domains.general)
    assert 0 < len(domains) <= 5


async def test_override_file_from_settings_drives_include_domains(
    respx_mock: respx.MockRouter, tmp_path: Path
) -> None:
    override = tmp_path / "domains.json"
    override.write_text(json.dumps({"python": ["docs.python.org", "peps.python.org"]}))
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_empty.json"))
    source = TavilyDocsSource.from_settings(
        settings(tavily_api_key=SecretStr(KEY), docs_domains=override), sleep=Sleeps()
    )
    await source.search("python dataclass slots", "learning", 3)
    assert sent_body(route)["include_domains"] == ["docs.python.org", "peps.python.org"]


async def test_malformed_override_file_skips_the_source_with_its_reason(
    respx_mock: respx.MockRouter, tmp_path: Path
) -> None:
    override = tmp_path / "domains.json"
    override.write_text('{"python": "docs.python.org"}')
    source = TavilyDocsSource.from_settings(
        settings(tavily_api_key=SecretStr(KEY), docs_domains=override)
    )
    status = source.status()
    assert status.state == "skipped"
    assert str(override) in status.reason and "expected a list" in status.reason
    with pytest.raises(SourceUnavailable, match="expected a list"):
        await source.search("python", "learning", 3)
    assert respx_mock.calls.call_count == 0


async def test_long_query_is_clipped_to_tavily_limit(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(200, "search_empty.json"))
    long_query = "python " + "traceback line " * 60
    await make_source().search(long_query, "debugging", 5)
    sent = sent_body(route)["query"]
    assert 0 < len(sent) <= MAX_QUERY_CHARS
    assert long_query.startswith(sent)
    assert not sent.endswith(" ")


def test_clip_query_keeps_short_queries_and_cuts_at_words() -> None:
    assert clip_query("  how   to  sort  ") == "how to sort"
    assert clip_query("alpha beta gamma", limit=12) == "alpha beta"


# --------------------------------------------------------------------------- errors
# The shared client's contract (5xx retries, breaker, timeouts, malformed JSON, an
# unreachable network, a rejected or missing key): test_online_contract.py.


async def test_429_then_success_honours_retry_after(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(SEARCH_URL).mock(
        side_effect=[
            reply(429, "error_429.json", headers={"Retry-After": "2"}),
            reply(200, "search_success.json"),
        ]
    )
    sleeps = Sleeps()
    results = await make_source(sleeps).search("python asyncio", "learning", 5)
    assert len(results) == 3
    assert sleeps.calls == [2.0]
    assert route.call_count == 2


async def test_429_every_time_gives_a_clear_rate_limit_error(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(SEARCH_URL).mock(
        return_value=reply(429, "error_429.json", headers={"Retry-After": "1"})
    )
    sleeps = Sleeps()
    with pytest.raises(SourceError, match="rate limit") as caught:
        await make_source(sleeps).search("python", "learning", 5)
    assert "HTTP 429" in str(caught.value)
    assert route.call_count == 3  # first try + the shared policy's 2 retries
    assert sleeps.calls == [1.0, 1.0]


@pytest.mark.parametrize(
    ("status", "fixture", "message"),
    [
        (432, "error_432.json", "plan usage limit"),
        (433, "error_433.json", "pay-as-you-go limit"),
    ],
)
async def test_plan_limits_are_explained_and_not_retried(
    respx_mock: respx.MockRouter, status: int, fixture: str, message: str
) -> None:
    route = respx_mock.post(SEARCH_URL).mock(return_value=reply(status, fixture))
    sleeps = Sleeps()
    source = make_source(sleeps)
    with pytest.raises(SourceError, match=message):
        await source.search("python", "learning", 5)
    assert route.call_count == 1 and sleeps.calls == []
    assert message in source.status().reason


async def test_json_without_results_list_is_an_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(SEARCH_URL).mock(return_value=httpx.Response(200, json={"detail": "odd"}))
    with pytest.raises(SourceError, match="no results list"):
        await make_source().search("python", "learning", 5)


# --------------------------------------------------------------------------- secrets


async def test_key_is_never_in_401_or_429_errors(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(SEARCH_URL).mock(
        side_effect=[reply(401, "error_401.json"), *[reply(429, "error_429.json")] * 3]
    )
    for source in (make_source(), make_source()):
        with pytest.raises(SourceError) as caught:
            await source.search("python", "learning", 5)
        assert KEY not in str(caught.value)


# --------------------------------------------------------------------------- factory


def test_factory_reads_key_and_timeouts_from_settings() -> None:
    without = create_tavily_docs(settings())
    assert without.status().reason == "TAVILY_API_KEY not set"

    with_key = create_source(
        "tavily_docs", settings(tavily_api_key=SecretStr(KEY), http_timeout=3.5)
    )
    assert isinstance(with_key, TavilyDocsSource)
    assert with_key.name == "tavily_docs"
    assert with_key.status().state == "ready"
    assert with_key.http_policy.timeout == 3.5
    assert KEY not in repr(with_key.status())
