"""github source against recorded GitHub REST code-search responses (respx, no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.sources.base import Source, SourceError
from codeweaver.sources.gh_format import (
    build_query,
    fragments,
    path_language,
    question_language,
)
from codeweaver.sources.github import (
    NO_TOKEN,
    SECONDARY_LIMIT_SECONDS,
    GitHubCodeSource,
    make_github_source,
)
from codeweaver.sources.http import SourceUnavailable
from tests.fakes import FakeClock
from tests.unit.sources.online import recorded_sleep

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github"
SEARCH_URL = "https://api.github.com/search/code"
TOKEN = "ghp_TESTTOKEN0123456789abcdefABCDEF"
QUESTION = "How do I use read_lines to strip the newline from each line in Python?"
WALL_NOW = 1_700_000_000.0


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture
def source(sleeps: list[float], clock: FakeClock) -> GitHubCodeSource:
    return make(sleeps, clock)


def make(sleeps: list[float], clock: FakeClock, token: str | None = TOKEN) -> GitHubCodeSource:
    sleep = recorded_sleep(sleeps)
    return GitHubCodeSource(token, sleep=sleep, clock=clock, wall_clock=lambda: WALL_NOW)


# -- success ------------------------------------------------------------------------------


async def test_search_sends_the_documented_request(
    api: respx.MockRouter, source: GitHubCodeSource
) -> None:
    route = api.get(SEARCH_URL).respond(200, json=load("search_code.json"))

    await source.search(QUESTION, "code_review", 3)

    request = route.calls.last.request
    assert request.headers["accept"] == "application/vnd.github.text-match+json"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert request.url.params["per_page"] == "3"
    # The identifier the question names, never its prose words ("strip", "newline", "line").
    assert request.url.params["q"] == "read_lines language:python"


async def test_search_maps_items_to_results(
    api: respx.MockRouter, source: GitHubCodeSource
) -> None:
    api.get(SEARCH_URL).respond(200, json=load("search_code.json"))

    results = await source.search(QUESTION, "code_review", 5)

    assert [r["title"] for r in results] == [
        "octo-labs/linetools: src/linetools/reader.py",
        "ruth-dev/scratch: tools/io_utils.py",
        "acme/pipeline: docker/Dockerfile",
    ]
    first, _, third = results
    assert first["url"] == (
        "https://github.com/octo-labs/linetools/blob/"
        "9b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c/src/linetools/reader.py"
    )
    assert first["reference"] == (
        "github:octo-labs/linetools/src/linetools/reader.py"
        "@3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    )
    assert all(r["source"] == "github" and r["date"] is None for r in results)
    assert first["snippet"] == (
        "[python · src/linetools/reader.py]\n"
        "def read_lines(path):\n"
        '    with open(path, encoding="utf-8") as handle:\n'
        "        for line in handle:\n"
        '            yield line.rstrip("\\n")\n'
        "…\n"
        "    # read_lines never loads the whole file"
    )
    assert third["snippet"] == "[dockerfile · docker/Dockerfile]\ndocker/Dockerfile"
    # Code-search items carry no licence: none is claimed, the repository is named.
    assert first["attribution"] == (
        "code from octo-labs/linetools; reuse under that repository's licence"
    )
    assert all("MIT" not in (r["attribution"] or "") for r in results)
    # Scored on the question's terms, not GitHub's score: the reader that has read_lines,
    # lines and the newline strip outranks a Dockerfile whose path is all that matched.
    scores = [r["score"] or 0.0 for r in results]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]
    assert third["score"] is not None and third["score"] < 0.13


async def test_limit_caps_the_results(api: respx.MockRouter, source: GitHubCodeSource) -> None:
    api.get(SEARCH_URL).respond(200, json=load("search_code.json"))

    assert len(await source.search(QUESTION, "learning", 2)) == 2


async def test_empty_result(api: respx.MockRouter, source: GitHubCodeSource) -> None:
    api.get(SEARCH_URL).respond(200, json=load("search_code_empty.json"))

    assert await source.search("frobnicate_unfrobnicable quux", "learning", 5) == []


async def test_question_of_stopwords_only_makes_no_call(
    api: respx.MockRouter, source: GitHubCodeSource
) -> None:
    route = api.get(SEARCH_URL).respond(200, json=load("search_code.json"))

    assert await source.search("How do I do it?", "learning", 5) == []
    assert route.call_count == 0


# -- rate limits --------------------------------------------------------------------------


async def test_secondary_rate_limit_with_short_retry_after_is_retried(
    api: respx.MockRouter, source: GitHubCodeSource, sleeps: list[float]
) -> None:
    route = api.get(SEARCH_URL)
    route.side_effect = [
        httpx.Response(403, headers={"retry-after": "2"}, json=load("secondary_rate_limit.json")),
        httpx.Response(200, json=load("search_code.json")),
    ]

    results = await source.search(QUESTION, "learning", 5)

    assert len(results) == 3
    assert route.call_count == 2
    assert sleeps == [2.0]


async def test_secondary_rate_limit_with_long_retry_after_blocks(
    api: respx.MockRouter, source: GitHubCodeSource, clock: FakeClock, sleeps: list[float]
) -> None:
    route = api.get(SEARCH_URL).respond(
        403, headers={"retry-after": "60"}, json=load("secondary_rate_limit.json")
    )

    with pytest.raises(SourceError, match="secondary rate limit; retry after 60s"):
        await source.search(QUESTION, "learning", 5)
    assert route.call_count == 1 and sleeps == []

    with pytest.raises(SourceUnavailable):
        await source.search(QUESTION, "learning", 5)
    assert route.call_count == 1
    clock.now += 61
    assert source.status().state == "ready"


async def test_secondary_rate_limit_without_headers_waits_a_minute(
    api: respx.MockRouter, source: GitHubCodeSource, clock: FakeClock, sleeps: list[float]
) -> None:
    route = api.get(SEARCH_URL).respond(403, json=load("secondary_rate_limit.json"))

    with pytest.raises(SourceError, match="secondary rate limit"):
        await source.search(QUESTION, "learning", 5)

    assert route.call_count == 1 and sleeps == []
    clock.now += SECONDARY_LIMIT_SECONDS - 1
    assert source.status().state == "skipped"
    clock.now += 2
    assert source.status().state == "ready"


async def test_forbidden_without_rate_limit_is_a_plain_error(
    api: respx.MockRouter, source: GitHubCodeSource
) -> None:
    route = api.get(SEARCH_URL).respond(
        403, json={"message": "Resource not accessible by personal access token"}
    )

    with pytest.raises(SourceError, match="HTTP 403"):
        await source.search(QUESTION, "learning", 5)

    assert route.call_count == 1
    assert source.status().state == "ready"


async def test_primary_rate_limit_blocks_until_reset_without_retrying(
    api: respx.MockRouter, source: GitHubCodeSource, clock: FakeClock, sleeps: list[float]
) -> None:
    headers = {
        "x-ratelimit-limit": "10",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(WALL_NOW) + 120),
        "x-ratelimit-resource": "code_search",
    }
    route = api.get(SEARCH_URL).respond(403, headers=headers, json=load("primary_rate_limit.json"))

    with pytest.raises(SourceError, match="resets in 120s"):
        await source.search(QUESTION, "learning", 5)

    assert route.call_count == 1 and sleeps == []
    clock.now += 119
    assert "rate limit" in source.status().reason
    clock.now += 2
    assert source.status().state == "ready"


async def test_last_allowed_request_returns_results_then_blocks(
    api: respx.MockRouter, source: GitHubCodeSource
) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(WALL_NOW) + 30)}
    route = api.get(SEARCH_URL).respond(200, headers=headers, json=load("search_code.json"))

    assert len(await source.search(QUESTION, "learning", 5)) == 3

    with pytest.raises(SourceUnavailable, match="rate limit"):
        await source.search(QUESTION, "learning", 5)
    assert route.call_count == 1


# The shared client's contract (retries, breaker, client errors, malformed JSON, timeouts,
# an unreachable network, secrets kept out of messages): test_online_contract.py.


# -- status, factory and pure helpers -----------------------------------------------------


def test_status_is_ready_with_a_token(source: GitHubCodeSource) -> None:
    assert str(source.status()) == "ready"
    assert isinstance(source, Source)


def test_factory_reads_token_and_timeouts_from_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    settings = Settings(github_token=SecretStr(TOKEN), http_timeout=4.0)

    source = make_github_source(settings)

    assert isinstance(source, GitHubCodeSource)
    assert source.status().state == "ready"
    assert source.client.policy.timeout == 4.0
    assert source.client.redact(TOKEN) == "***"


def test_factory_without_token_is_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)

    source = make_github_source(Settings())

    assert str(source.status()) == f"skipped: {NO_TOKEN}"


@pytest.mark.parametrize(
    ("text", "query"),
    [
        (QUESTION, "read_lines language:python"),
        # Prose only ("fetch", "returning", "undefined"): any file matches, so no search.
        ("Why is my javascript fetch returning undefined?", ""),
        (
            "asyncio.gather raises CancelledError in TaskGroup",
            "asyncio.gather CancelledError TaskGroup language:python",
        ),
        ("How to use df.groupby with pandas agg", "df.groupby language:python"),
        ("How can I do this?", ""),
        ("Sort Dict by Values in Python 3.6+", ""),
        # Real StackEval titles (+ the names their posts quote): language names are not
        # code, and a lone class name matches too many files to search for.
        (
            "Having mounted() only run once on a component Vue.js v-if this.mode",
            "mounted this.mode language:javascript",
        ),
        (
            "Can't customize color palette types on Material UI theme in TypeScript "
            "theme.palette.gradient.main",
            "theme.palette.gradient.main language:typescript",
        ),
        ("Change array in javascript into simpler object TypeError", ""),
        # Korean text: the pipeline also sends the English form; this one is not searched.
        ("pandas에서 df.groupby 결과를 정렬하는 방법", ""),
    ],
)
def test_build_query(text: str, query: str) -> None:
    assert build_query(text) == query
    assert len(query) <= 150


def test_build_query_keeps_three_terms_at_most() -> None:
    text = "load_config calls yamlLoader.parse, then DataFrame.from_dict raises KeyError"
    assert build_query(text) == "load_config yamlLoader.parse DataFrame.from_dict"


def test_question_language_first_named_wins() -> None:
    assert question_language("Port this C++ code to Rust") == "cpp"
    assert question_language("javascript, not java") == "javascript"
    assert question_language("let's go to the park") is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # Real Korean phrasings: the particle is attached to the name.
        ("python에서 리스트를 정렬하는 방법", "python"),
        ("자바스크립트 말고 typescript로 작성하려면", "typescript"),
        # A library written in one language gives its language.
        ("pandas를 사용해서 csv를 읽을 때 인코딩 오류", "python"),
        ("react에서 useEffect가 두 번 실행돼요", "javascript"),
        ("javaScript가 아니라 rust에서", "javascript"),  # the first named, as in English
    ],
)
def test_question_language_through_korean_particles(text: str, language: str) -> None:
    assert question_language(text) == language


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("web/App.TSX", "typescript"),
        ("Dockerfile", "dockerfile"),
        ("notes", "text"),
    ],
)
def test_path_language(path: str, language: str) -> None:
    assert path_language(path) == language


def test_fragments_prefer_content_matches_and_drop_duplicates() -> None:
    item = {
        "text_matches": [
            {"property": "path", "fragment": "src/reader.py"},
            {"property": "content", "fragment": "\ndef read_lines():\n    pass  \n"},
            {"property": "content", "fragment": "def read_lines():\n    pass"},
        ]
    }
    assert fragments(item) == "def read_lines():\n    pass"
    assert fragments({"text_matches": [{"property": "path", "fragment": "a/b.py"}]}) == "a/b.py"
    assert fragments({}) == ""
