"""github_issues source against GitHub's documented response shapes (respx, no network)."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.sources.base import ReportsQuota, Source, SourceError
from codeweaver.sources.gh_issue_format import (
    answer_comment,
    build_issue_query,
    clip,
    repos_named,
)
from codeweaver.sources.github_issues import (
    GitHubIssuesSource,
    make_github_issues_source,
)
from codeweaver.sources.http import SourceUnavailable
from codeweaver.sources.query_shapes import MAX_QUERY_CHARS
from tests.fakes import FakeClock, make_deps
from tests.unit.sources.online import recorded_sleep

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github"
API = "https://api.github.com"
SEARCH_URL = f"{API}/search/issues"
COMMENTS_URL = API + "/repos/pandas-dev/pandas/issues/{}/comments"
TOKEN = "ghp_TESTTOKEN0123456789abcdefABCDEF"
WALL_NOW = 1_700_000_000.0
ERROR = "AttributeError: 'DataFrame' object has no attribute 'append'"
QUESTION = f"After upgrading pandas to 2.0 I get {ERROR}. How do I fix it?"
EXPECTED_Q = f'"{ERROR}" is:issue repo:pandas-dev/pandas'


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def documented() -> dict[str, Any]:
    """The JSON blocks of DOCUMENTED.md by their name (`search_issues.example`, …)."""
    text = (FIXTURES / "DOCUMENTED.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json (\S+)\n(.*?)\n```", text, flags=re.DOTALL)
    return {name: json.loads(body) for name, body in blocks}


def make(sleeps: list[float], clock: FakeClock, token: str | None = None) -> GitHubIssuesSource:
    sleep = recorded_sleep(sleeps)
    return GitHubIssuesSource(token, sleep=sleep, clock=clock, wall_clock=lambda: WALL_NOW)


@pytest.fixture
def source(sleeps: list[float], clock: FakeClock) -> GitHubIssuesSource:
    return make(sleeps, clock)


def mock_answers(api: respx.MockRouter, comments: list[Any] | None = None) -> respx.Route:
    """The search, and the comments of the two issues that have some."""
    api.get(COMMENTS_URL.format(53720)).respond(200, json=[])
    route = api.get(COMMENTS_URL.format(52341)).respond(
        200, json=comments if comments is not None else load("issue_comments.json")
    )
    api.get(SEARCH_URL).respond(200, json=load("search_issues.json"))
    return route


# -- the query ----------------------------------------------------------------------------


def test_error_line_is_a_quoted_phrase_in_the_named_library() -> None:
    q = build_issue_query(QUESTION)
    assert q == EXPECTED_Q
    assert len(q) <= MAX_QUERY_CHARS
    for prose in ("After", "upgrading", "fix", "How"):
        assert prose not in q


def test_a_korean_particle_does_not_hide_the_library() -> None:
    assert repos_named("pandas를 써서 df.append 하면 AttributeError가 나요") == [
        "pandas-dev/pandas"
    ]
    # A canonical English form that kept the particle still names the library ...
    english = f"After upgrading pandas를 to 2.0 I get {ERROR}"
    assert repos_named(english) == ["pandas-dev/pandas"]
    # ... but a query with Hangul is not searched: the English form is sent as well.
    assert build_issue_query(english) == ""


@pytest.mark.parametrize(
    ("text", "q"),
    [
        (
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', "
            "port=443): Max retries exceeded with url: /v1/items",
            '"Max retries exceeded with url:" is:issue repo:psf/requests',
        ),
        (
            "TypeError: Cannot read properties of undefined (reading 'map') in next.js app router",
            "\"TypeError: Cannot read properties of undefined (reading 'map')\" "
            "is:issue repo:vercel/next.js",
        ),
        (
            "My fixtures stopped working after upgrading pytest: request.getfixturevalue fails",
            "request.getfixturevalue is:issue repo:pytest-dev/pytest",
        ),
        (
            "torch.cuda.is_available() returns False after upgrading pytorch",
            "torch.cuda.is_available is:issue repo:pytorch/pytorch",
        ),
        (ERROR, f'"{ERROR}" is:issue'),  # no library named: across GitHub
        # A library named where the message starts is part of it, not the question's.
        (
            "SyntaxError: Jest encountered an unexpected token",
            '"SyntaxError: Jest encountered an unexpected token" is:issue repo:jestjs/jest',
        ),
        (
            "Why do I get a KeyError when grouping in pandas?",
            "KeyError is:issue repo:pandas-dev/pandas",
        ),
        # No error, no identifier: prose matches every issue, so nothing is searched.
        ("Why is my code so slow after the upgrade?", ""),
        ("How do I handle requests in flask?", ""),
        ("Why do I get a KeyError when grouping?", ""),
    ],
)
def test_query_shapes(text: str, q: str) -> None:
    assert build_issue_query(text) == q


def test_a_long_error_keeps_the_query_short() -> None:
    text = "In pandas and numpy: ValueError: " + " ".join(["cannot reindex on an axis"] * 12)
    q = build_issue_query(text)
    assert len(q) <= MAX_QUERY_CHARS
    assert q.endswith("is:issue repo:pandas-dev/pandas repo:numpy/numpy")
    assert q.count('"') == 2


def test_ambiguous_library_names_need_code_context() -> None:
    assert repos_named("How do I handle requests in flask?") == ["pallets/flask"]
    assert repos_named("import requests fails behind a proxy") == ["psf/requests"]
    assert repos_named("requests.get hangs") == ["psf/requests"]
    assert repos_named("How do services react to load?") == []
    assert repos_named("React hooks run twice") == ["facebook/react"]
    assert repos_named("docker build fails") == ["docker/cli", "moby/moby"]


async def test_no_error_and_no_identifier_makes_no_call(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    route = api.get(SEARCH_URL).respond(200, json=load("search_issues.json"))

    assert await source.search("Why is my code so slow after the upgrade?", "debugging", 5) == []
    assert await source.search("pandas를 쓰면 AttributeError가 나요", "debugging", 5) == []
    assert route.call_count == 0


# -- results ------------------------------------------------------------------------------


async def test_search_sends_the_documented_requests(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    comments = mock_answers(api)
    search = api.routes[-1]

    await source.search(QUESTION, "debugging", 5)

    request = search.calls.last.request
    assert request.url.params["q"] == EXPECTED_Q
    assert request.url.params["per_page"] == "10"
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert "authorization" not in request.headers  # unauthenticated search works
    assert comments.call_count == 1
    assert comments.calls.last.request.url.params["per_page"] == "100"
    assert comments.calls.last.request.url.params["page"] == "1"
    # The issue without comments (#52390) costs no request.
    assert len(api.calls) == 3


async def test_results_carry_state_labels_and_the_answer(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    mock_answers(api)

    results = await source.search(QUESTION, "debugging", 5)

    assert [r["reference"] for r in results] == [
        "github_issues:pandas-dev/pandas#52341",
        "github_issues:pandas-dev/pandas#52390",
        "github_issues:pandas-dev/pandas#53720",
    ]
    first = results[0]
    assert first["title"] == (
        "pandas-dev/pandas#52341: AttributeError: 'DataFrame' object has no attribute "
        "'append' after upgrading to 2.0"
    )
    assert first["url"] == "https://github.com/pandas-dev/pandas/issues/52341"
    assert first["source"] == "github_issues"
    assert first["date"] == "2023-04-05"  # the issue's updated_at
    snippet = first["snippet"]
    assert snippet.startswith("[issue · closed · labels: Usage Question]\n### Pandas version")
    assert "<!--" not in snippet  # the issue template's comments are dropped
    # The last maintainer comment answers the closed issue, Markdown kept as is.
    assert "**Comment by core-dev-ana** (member, 👍 25):\n`DataFrame.append` was" in snippet
    assert "```python\ndf = pd.concat(" in snippet
    assert "Same here" not in snippet and "Thanks, that works" not in snippet
    assert (
        first["attribution"] == "issue by jdoe-data in pandas-dev/pandas; comment by core-dev-ana"
    )
    # Issue search items carry no licence: none is claimed.
    for result in results:
        assert not re.search(r"licen[cs]e|CC BY|MIT|Apache", result["attribution"] or "")
    assert results[2]["snippet"].startswith("[issue · open · labels: Bug, Reshaping]\n")
    assert results[1]["snippet"].startswith("[issue · closed · labels: Docs]\n")
    assert "**Comment by" not in results[1]["snippet"] + results[2]["snippet"]


async def test_score_is_the_share_of_query_words_found(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    mock_answers(api)

    results = await source.search(QUESTION, "debugging", 5)

    scores = [r["score"] or 0.0 for r in results]
    assert scores == sorted(scores, reverse=True)
    # The issue quoting the error outranks the loosely related concat warning.
    assert scores[0] > scores[-1]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert len(set(scores)) == 3  # GitHub scored all three 1.0: its score is not used


async def test_limit_caps_results_and_comment_reads(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    comments = mock_answers(api)

    results = await source.search(QUESTION, "debugging", 1)

    assert len(results) == 1
    assert api.routes[-1].calls.last.request.url.params["per_page"] == "2"
    assert comments.call_count == 1


async def test_an_open_issue_shows_the_most_upvoted_comment(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    thread = [c for c in load("issue_comments.json") if c["author_association"] != "MEMBER"]
    api.get(COMMENTS_URL.format(52341)).respond(200, json=[])
    api.get(COMMENTS_URL.format(53720)).respond(200, json=thread)
    api.get(SEARCH_URL).respond(200, json=load("search_issues.json"))

    results = await source.search(QUESTION, "debugging", 5)

    open_issue = next(r for r in results if r["reference"].endswith("#53720"))
    assert "**Comment by sam-py** (none, 👍 4):\nSame here" in open_issue["snippet"]


async def test_unreadable_comments_still_give_the_issue(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    api.get(COMMENTS_URL.format(52341)).respond(404, json={"message": "Not Found"})
    api.get(COMMENTS_URL.format(53720)).respond(200, json=[])
    api.get(SEARCH_URL).respond(200, json=load("search_issues.json"))

    results = await source.search(QUESTION, "debugging", 5)

    assert len(results) == 3
    assert "**Comment by" not in results[0]["snippet"]
    assert source.status().state == "ready"


async def test_query_variations_share_requests(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    comments = mock_answers(api)
    search = api.routes[-1]

    await asyncio.gather(
        source.search(QUESTION, "debugging", 5), source.search(QUESTION, "debugging", 5)
    )
    await source.search(f"pandas: {ERROR}", "debugging", 5)  # another wording, same issue

    assert search.call_count == 2  # the concurrent pair asked once
    assert comments.call_count == 1  # the answer of an unchanged issue is kept


async def test_a_long_thread_reads_its_last_page(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    data = load("search_issues.json")
    data["items"][0]["comments"] = 250
    api.get(COMMENTS_URL.format(53720)).respond(200, json=[])
    route = api.get(COMMENTS_URL.format(52341)).respond(200, json=load("issue_comments.json"))
    api.get(SEARCH_URL).respond(200, json=data)

    await source.search(QUESTION, "debugging", 5)

    assert route.calls.last.request.url.params["page"] == "3"


async def test_an_unexpected_answer_is_a_source_error(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    api.get(SEARCH_URL).respond(200, json={"message": "no items here"} | {"items": None})

    with pytest.raises(SourceError, match="unexpected response") as caught:
        await source.search(QUESTION, "debugging", 5)
    assert caught.value.kind == "bad_response"


# -- the answer-bearing comment -----------------------------------------------------------


def test_closed_issue_takes_the_last_maintainer_comment() -> None:
    thread = load("issue_comments.json")
    assert answer_comment("closed", thread) is thread[1]
    later = {**copy.deepcopy(thread[0]), "author_association": "OWNER", "id": 7}
    assert answer_comment("closed", [*thread, later]) is later


def test_otherwise_the_most_upvoted_comment_or_none() -> None:
    thread = load("issue_comments.json")
    assert answer_comment("open", thread) is thread[1]  # 25 +1s
    assert answer_comment("closed", [thread[0], thread[2]]) is thread[0]  # no maintainer
    assert answer_comment("open", [thread[2]]) is None  # no +1 at all
    assert answer_comment("open", []) is None


def test_bots_never_answer() -> None:
    thread = load("issue_comments.json")
    thread[1]["user"]["type"] = "Bot"
    assert answer_comment("closed", thread) is thread[0]


def test_the_documented_comment_shape_without_reactions() -> None:
    example = documented()["issue_comments.example"]
    assert answer_comment("closed", example) is example[0]  # a collaborator's
    assert answer_comment("open", example) is None  # no reaction counts to rank by


def test_clipping_closes_an_open_code_fence() -> None:
    text = "Use this:\n\n```python\n" + "x = 1\n" * 200 + "```"
    clipped = clip(text, 100)
    assert len(clipped) < 120
    assert clipped.count("```") == 2


# -- token and rate limits ----------------------------------------------------------------


async def test_a_token_is_sent_as_bearer(
    api: respx.MockRouter, sleeps: list[float], clock: FakeClock
) -> None:
    mock_answers(api)
    source = make(sleeps, clock, token=TOKEN)

    await source.search(QUESTION, "debugging", 5)

    assert all(c.request.headers["authorization"] == f"Bearer {TOKEN}" for c in api.calls)


async def test_used_up_search_quota_blocks_until_reset(
    api: respx.MockRouter, source: GitHubIssuesSource, clock: FakeClock, sleeps: list[float]
) -> None:
    headers = {
        "x-ratelimit-limit": "10",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(WALL_NOW) + 120),
        "x-ratelimit-resource": "search",
    }
    route = api.get(SEARCH_URL).respond(403, headers=headers, json=load("primary_rate_limit.json"))

    with pytest.raises(SourceError, match="resets in 120s") as caught:
        await source.search(QUESTION, "debugging", 5)

    assert caught.value.kind == "rate_limited"
    assert route.call_count == 1 and sleeps == []
    assert "rate limit" in source.status().reason
    with pytest.raises(SourceUnavailable):
        await source.search(QUESTION, "debugging", 5)
    assert route.call_count == 1
    clock.now += 121
    assert source.status().state == "ready"


async def test_a_long_secondary_limit_blocks_and_a_short_one_is_waited_for(
    api: respx.MockRouter, source: GitHubIssuesSource, clock: FakeClock, sleeps: list[float]
) -> None:
    mock_answers(api)
    route = api.routes[-1]
    route.side_effect = [
        httpx.Response(403, headers={"retry-after": "2"}, json=load("secondary_rate_limit.json")),
        httpx.Response(200, json=load("search_issues.json")),
        httpx.Response(403, headers={"retry-after": "90"}, json=load("secondary_rate_limit.json")),
    ]

    assert len(await source.search(QUESTION, "debugging", 5)) == 3
    assert sleeps == [2.0]
    with pytest.raises(SourceError, match="secondary rate limit; retry after 90s"):
        await source.search("pandas: df.pivot_table KeyError", "debugging", 5)
    assert source.status().state == "skipped"
    clock.now += 91
    assert source.status().state == "ready"


async def test_a_secondary_limit_without_headers_waits_a_minute(
    api: respx.MockRouter, source: GitHubIssuesSource, clock: FakeClock
) -> None:
    api.get(SEARCH_URL).respond(403, json=load("secondary_rate_limit.json"))

    with pytest.raises(SourceError, match="secondary rate limit"):
        await source.search(QUESTION, "debugging", 5)
    clock.now += 59
    assert source.status().state == "skipped"
    clock.now += 2
    assert source.status().state == "ready"


async def test_used_up_comment_quota_costs_the_comments_not_the_search(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    headers = {
        "x-ratelimit-limit": "60",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(WALL_NOW) + 1800),
        "x-ratelimit-resource": "core",
    }
    comments = api.get(COMMENTS_URL.format(52341)).respond(
        403, headers=headers, json=load("primary_rate_limit.json")
    )
    api.get(COMMENTS_URL.format(53720)).respond(403, headers=headers, json={})
    search = api.get(SEARCH_URL).respond(200, json=load("search_issues.json"))

    first = await source.search(QUESTION, "debugging", 5)
    second = await source.search(f"pandas: {ERROR}", "debugging", 5)

    assert len(first) == len(second) == 3
    assert search.call_count == 2
    assert comments.call_count == 1  # blocked until the reset, without asking again
    assert source.status().state == "ready"


async def test_quota_left_reports_both_quotas(
    api: respx.MockRouter, source: GitHubIssuesSource
) -> None:
    assert isinstance(source, ReportsQuota)
    assert source.quota_left() is None
    api.get(COMMENTS_URL.format(53720)).respond(200, json=[])
    api.get(COMMENTS_URL.format(52341)).respond(
        200,
        headers={"x-ratelimit-limit": "60", "x-ratelimit-remaining": "58"},
        json=load("issue_comments.json"),
    )
    api.get(SEARCH_URL).respond(
        200,
        headers={"x-ratelimit-limit": "10", "x-ratelimit-remaining": "9"},
        json=load("search_issues.json"),
    )

    await source.search(QUESTION, "debugging", 5)

    assert source.quota_left() == "9 of 10 searches this minute; 58 of 60 requests this hour"


# -- factory ------------------------------------------------------------------------------


def test_factory_works_without_a_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)

    source = make_github_issues_source(Settings())

    assert isinstance(source, Source)
    assert str(source.status()) == "ready"
    assert "Authorization" not in source.client.headers


def test_factory_reads_token_base_url_and_timeouts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEWEAVER_GITHUB_API_URL", "https://ghe.example.com/api/v3/")
    settings = Settings(github_token=SecretStr(TOKEN), http_timeout=4.0)

    source = make_github_issues_source(settings)

    assert source.client.base_url == "https://ghe.example.com/api/v3"
    assert source.client.headers["Authorization"] == f"Bearer {TOKEN}"
    assert source.client.policy.timeout == 4.0
    assert source.client.redact(TOKEN) == "***"


# -- fixtures keep GitHub's documented shapes ---------------------------------------------


def assert_shape(fixture: Any, example: Any, path: str = "$") -> None:
    """Every key of `fixture` is a key of the documented `example`, recursively."""
    if isinstance(example, dict):
        if fixture is None:
            return  # a nullable object (milestone, assignee, type)
        assert isinstance(fixture, dict), path
        unknown = sorted(set(fixture) - set(example))
        assert not unknown, f"{path}: keys the documented example lacks: {unknown}"
        for key, value in fixture.items():
            assert_shape(value, example[key], f"{path}.{key}")
    elif isinstance(example, list) and example and isinstance(example[0], dict):
        assert isinstance(fixture, list), path
        for index, element in enumerate(fixture):
            assert_shape(element, example[0], f"{path}[{index}]")


def test_search_fixture_matches_the_documented_example() -> None:
    docs = documented()
    example, required = docs["search_issues.example"], docs["search_issues.required"]
    fixture = load("search_issues.json")
    assert_shape(fixture, example)
    for data in (fixture, example):
        assert set(required["response"]) <= set(data)
        for item in data["items"]:
            assert set(required["item"]) <= set(item)


def test_comments_fixture_matches_the_documented_example() -> None:
    docs = documented()
    example, required = docs["issue_comments.example"], docs["issue_comments.required"]
    extras = docs["issue_comments.schema-extras"]
    fixture = load("issue_comments.json")
    assert_shape(fixture, [{**example[0], **extras}])
    for comment in [*fixture, *example]:
        assert set(required["comment"]) <= set(comment)
    for comment in fixture:
        assert set(required["reactions"]) == set(comment["reactions"])


# -- graph wiring -------------------------------------------------------------------------


def test_the_node_is_planned_for_debugging_only(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {}, [GitHubIssuesSource()])

    debugging = {p.node: p for p in deps.search_plan("debugging")}
    learning = {p.node: p for p in deps.search_plan("learning")}
    review = {p.node: p for p in deps.search_plan("code_review")}

    assert debugging["search_github_issues"].source == "github_issues"
    assert debugging["search_github_issues"].limit == deps.settings.results_per_source
    assert learning["search_github_issues"].source is None
    assert learning["search_github_issues"].skip_reason == "not used for learning questions"
    assert review["search_github_issues"].source is None
