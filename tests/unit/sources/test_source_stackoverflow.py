"""stackoverflow source against recorded Stack Exchange API 2.3 responses (respx, no network)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import respx
from pydantic import SecretStr

from codeweaver.agent.nodes.search_subgraph import is_relevant
from codeweaver.config import Settings
from codeweaver.sources.base import Source, SourceError
from codeweaver.sources.http import SourceUnavailable
from codeweaver.sources.so_format import (
    cc_by_sa_version,
    clip_markdown,
    guess_tags,
    html_to_markdown,
    normalise_votes,
)
from codeweaver.sources.stackoverflow import (
    THROTTLE_DEFAULT_SECONDS,
    StackOverflowSource,
    make_stackoverflow_source,
)
from tests.fakes import FakeClock
from tests.unit.sources.online import recorded_sleep

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stackexchange"
SEARCH_URL = "https://api.stackexchange.com/2.3/search/advanced"
SIMILAR_URL = "https://api.stackexchange.com/2.3/similar"
ANSWERS_URL = r"https://api\.stackexchange\.com/2\.3/questions/(?P<ids>[0-9;]+)/answers"
QUESTION = "How do I read a large file line by line in Python without loading it?"
KEY = "sekrit-key-0123456789"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture
def source(sleeps: list[float], clock: FakeClock) -> StackOverflowSource:
    return make(sleeps, clock)


def make(
    sleeps: list[float],
    clock: FakeClock,
    key: str | None = None,
    now: datetime = datetime(2024, 5, 1, 23, 0, tzinfo=UTC),
) -> StackOverflowSource:
    return StackOverflowSource(key, sleep=recorded_sleep(sleeps), clock=clock, now=lambda: now)


def mock_success(
    api: respx.MockRouter,
    search: dict[str, Any] | None = None,
    answers: dict[str, Any] | None = None,
) -> tuple[respx.Route, respx.Route]:
    search_route = api.get(SEARCH_URL).respond(200, json=search or load("search_advanced.json"))
    answers_route = api.get(url__regex=ANSWERS_URL).respond(
        200, json=answers or load("answers.json")
    )
    return search_route, answers_route


# -- success ------------------------------------------------------------------------------


async def test_search_builds_results_from_questions_and_best_answers(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, answers_route = mock_success(api)

    results = await source.search(QUESTION, "debugging", 3)

    assert search_route.call_count == 1
    assert answers_route.call_count == 1  # every question's answers in one call
    params = search_route.calls.last.request.url.params
    # Not the whole sentence (the API requires every term): its core terms, ≤ 12 words,
    # without "Python", which the tag carries.
    assert params["q"] == "read large file line without loading"
    assert params["answers"] == "1"
    assert params["site"] == "stackoverflow"
    assert params["sort"] == "relevance"
    assert params["order"] == "desc"
    assert params["tagged"] == "python"
    assert params["pagesize"] == "3"
    assert "key" not in params
    answers_request = answers_route.calls.last.request
    assert answers_request.url.path == "/2.3/questions/8009882;3277503;71234567/answers"
    assert answers_request.url.params["filter"] == "withbody"
    assert answers_request.url.params["sort"] == "votes"
    assert answers_request.url.params["site"] == "stackoverflow"

    by_question = {r["reference"].split("/")[0]: r for r in results}
    assert [by_question[q]["reference"] for q in sorted(by_question)] == [
        "stackoverflow:q3277503/a3277516",  # no accepted answer: the top-voted one
        "stackoverflow:q71234567/a71234600",
        "stackoverflow:q8009882/a8010133",  # accepted (50 votes) beats 900 votes
    ]
    scores = [r["score"] or 0.0 for r in results]
    assert scores == sorted(scores, reverse=True)  # one scale: best first
    first = by_question["stackoverflow:q8009882"]
    second = by_question["stackoverflow:q3277503"]
    third = by_question["stackoverflow:q71234567"]
    assert first["title"] == "How to read a large file, line by line & without loading it all?"
    assert third["title"] == 'Why does "open()" keep the newline at the end of each line?'
    assert first["url"] == (
        "https://stackoverflow.com/questions/8009882/how-to-read-a-large-file-line-by-line"
    )
    assert all(r["source"] == "stackoverflow" for r in results)
    assert first["snippet"].splitlines()[0] == (
        "[accepted · python, file, line-by-line · 50 votes · question 742 votes]"
    )
    assert second["snippet"].splitlines()[0].startswith("[top-voted · python, string")
    assert first["date"] == "2011-11-04"
    assert second["date"] == "2010-07-19"


async def test_attribution_licence_is_the_one_the_api_states(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    mock_success(api)

    results = await source.search(QUESTION, "learning", 3)

    by_ref = {r["reference"]: r["attribution"] for r in results}
    assert by_ref["stackoverflow:q8009882/a8010133"] == (
        "answer by Jörg Weber (https://stackoverflow.com/users/128700/jorg-weber), "
        "CC BY-SA 3.0, https://stackoverflow.com/a/8010133"
    )
    # Written in 2010 but edited since: the API states CC BY-SA 4.0, not the 2.5 of its date.
    assert by_ref["stackoverflow:q3277503/a3277516"] == (
        "answer by Helga Brandt (https://stackoverflow.com/users/394012/helga-brandt), "
        "CC BY-SA 4.0, https://stackoverflow.com/a/3277516"
    )
    assert by_ref["stackoverflow:q71234567/a71234600"] == (
        "answer by Sam Ito (https://stackoverflow.com/users/20431977/sam-ito), "
        "CC BY-SA 4.0, https://stackoverflow.com/a/71234600"
    )


async def test_attribution_without_content_license_follows_the_date(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    answers = load("answers.json")
    for answer in answers["items"]:
        answer.pop("content_license")
    mock_success(api, answers=answers)

    results = await source.search(QUESTION, "learning", 3)

    by_ref = {r["reference"]: r["attribution"] or "" for r in results}
    assert "CC BY-SA 2.5" in by_ref["stackoverflow:q3277503/a3277516"]  # 2010


async def test_snippet_is_markdown_with_the_code_block_kept(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    mock_success(api)

    results = await source.search(QUESTION, "learning", 3)

    snippet = results[2]["snippet"]
    assert "<p>" not in snippet and "&quot;" not in snippet and "&gt;" not in snippet
    assert (
        "```py\n"
        "for line in f:\n"
        '    if line.rstrip("\\n") != "" and len(line) > 1:\n'
        '        process(line.rstrip("\\n"))\n'
        "```"
    ) in snippet
    assert "## Why" in snippet
    assert "- the *newline* is part of the data" in snippet
    assert "[the io docs](https://docs.python.org/3/library/io.html)" in snippet
    assert "# Do something with 'line'" in results[0]["snippet"]


async def test_an_answer_carries_its_question_as_markdown_apart_from_its_text(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    mock_success(api)

    results = await source.search(QUESTION, "learning", 3)

    newline = next(r for r in results if r["title"].startswith('Why does "open()"'))
    assert newline["asked"] == "Each line I read ends with `\\n`. Why?"
    # The question is context for the prompt, never part of the text claims are checked on.
    assert "Each line I read ends with" not in newline["snippet"]


async def test_an_accepted_answer_counts_whatever_its_votes(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    answers = load("answers.json")
    for answer in answers["items"]:
        if answer["answer_id"] == 71234600:
            answer["score"] = 0  # the norm for a recent question's accepted answer
    mock_success(api, answers=answers)

    results = await source.search("Why does open() keep the newline in Python?", "learning", 3)

    accepted = next(r for r in results if r["reference"] == "stackoverflow:q71234567/a71234600")
    assert accepted["snippet"].startswith("[accepted · ")
    assert accepted["score"] is not None and 0.0 < accepted["score"] <= 1.0
    assert is_relevant(accepted)  # not dropped as an incidental match


async def test_an_unaccepted_answer_is_weighed_by_its_votes(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    answers = load("answers.json")
    for answer in answers["items"]:
        if answer["answer_id"] == 71234600:
            answer["is_accepted"] = False
    search = load("search_advanced.json")
    for question in search["items"]:
        question.pop("accepted_answer_id", None)
    mock_success(api, search=search, answers=answers)
    unaccepted = await source.search(QUESTION, "learning", 3)
    api.reset()
    mock_success(api)
    accepted = await source.search(QUESTION, "learning", 3)

    def score(results: list[Any]) -> float:
        ref = "stackoverflow:q71234567/a71234600"
        return float(next(r["score"] for r in results if r["reference"] == ref))

    # 3 votes without the tick: a bit over half the accepted answer's weight.
    assert score(unaccepted) == pytest.approx(score(accepted) * (0.5 + 0.5 * 3 / 8), abs=0.002)


async def test_question_without_fetched_answer_is_kept_as_question_only(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    answers = load("answers.json")
    answers["items"] = [a for a in answers["items"] if a["question_id"] != 3277503]
    mock_success(api, answers=answers)

    results = await source.search(QUESTION, "learning", 3)

    question_only = next(r for r in results if r["reference"].startswith("stackoverflow:q3277503"))
    assert question_only["reference"] == "stackoverflow:q3277503"
    assert question_only["snippet"].startswith("[question only · python, string")
    assert "store each line as an element in a list" in question_only["snippet"]
    assert question_only["attribution"] is not None
    assert question_only["attribution"].startswith("question by Tomás Reyes (")
    # Without its answer it counts half of what its text matches.
    assert 0 < (question_only["score"] or 0) <= 0.5


async def test_key_is_sent_when_configured(
    api: respx.MockRouter, sleeps: list[float], clock: FakeClock
) -> None:
    search_route, answers_route = mock_success(api)
    source = make(sleeps, clock, key=KEY)

    await source.search(QUESTION, "learning", 3)

    assert search_route.calls.last.request.url.params["key"] == KEY
    assert answers_route.calls.last.request.url.params["key"] == KEY


async def test_empty_result_tries_similar_titles_then_makes_no_answers_call(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    _, answers_route = mock_success(api, search=load("search_advanced_empty.json"))
    similar_route = api.get(SIMILAR_URL).respond(200, json=load("search_advanced_empty.json"))

    assert await source.search("qwzx frobnicate the unfrobnicable", "learning", 5) == []
    assert similar_route.call_count == 1
    assert similar_route.calls.last.request.url.params["title"] == (
        "qwzx frobnicate the unfrobnicable"
    )
    assert answers_route.call_count == 0


async def test_similar_titles_answer_when_the_search_finds_nothing(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, answers_route = mock_success(api, search=load("search_advanced_empty.json"))
    similar_route = api.get(SIMILAR_URL).respond(200, json=load("search_advanced.json"))

    results = await source.search(QUESTION, "learning", 3)

    params = similar_route.calls.last.request.url.params
    assert params["title"] == "read large file line Python without loading"  # a title: whole
    assert params["tagged"] == "python" and params["sort"] == "relevance"
    assert "q" not in params
    # The guessed tag is tried, then dropped (the technology's word back in `q`).
    tagged, untagged = (call.request.url.params for call in search_route.calls)
    assert tagged["tagged"] == "python" and "python" not in tagged["q"].lower().split()
    assert "tagged" not in untagged and "Python" in untagged["q"].split()
    assert search_route.call_count == 2 and answers_route.call_count == 1
    assert {r["reference"] for r in results} >= {"stackoverflow:q8009882/a8010133"}


async def test_error_line_is_searched_as_a_quoted_phrase(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, _ = mock_success(api)
    error = "AttributeError: 'NoneType' object has no attribute 'group'"

    await source.search(error, "debugging", 3)

    assert search_route.calls.last.request.url.params["q"] == (
        "\"AttributeError: 'NoneType' object has no attribute 'group'\""
    )


async def test_pasted_post_sends_a_short_title_like_query(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, _ = mock_success(api)
    post = (
        "Pandas groupby then apply a custom function to every group returns the wrong "
        "index after upgrading to pandas 2.2 and I cannot see why this happens\n"
        "```python\ndf.groupby('a').apply(f)\n```\nIt worked in 1.5."
    )

    await source.search(post, "debugging", 3)

    q = search_route.calls.last.request.url.params["q"]
    assert len(q) <= 150 and len(q.split()) <= 12
    assert "```" not in q and "df.groupby" not in q
    assert q.startswith("groupby apply custom function")  # "Pandas" is the tag
    assert search_route.calls.last.request.url.params["tagged"].split(";")[0] == "pandas"


async def test_korean_query_is_not_sent(api: respx.MockRouter, source: StackOverflowSource) -> None:
    search_route, _ = mock_success(api)

    # No English word but "Python": nothing an English site could match on.
    assert await source.search("Python에서 큰 파일을 한 줄씩 읽는 방법", "learning", 3) == []
    assert search_route.call_count == 0


async def test_a_korean_query_sends_the_english_words_the_asker_kept(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, _ = mock_success(api)
    # A real phrasing (the Korean set's TypeScript error question).
    question = (
        "TypeScript에서 'HTMLElement | null' 형식의 인수를 'Element' 형식의 매개변수에 "
        "할당할 수 없다는 오류(ts(2345))가 나요"
    )

    await source.search(question, "debugging", 3)

    params = search_route.calls.last.request.url.params
    assert params["q"] == "HTMLElement null Element ts 2345"  # TypeScript: the tag
    assert params["tagged"] == "typescript"


async def test_blank_query_makes_no_call(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search_route, _ = mock_success(api)

    assert await source.search("   ", "learning", 5) == []
    assert search_route.call_count == 0


# -- throttles, backoff and quota ---------------------------------------------------------


async def test_backoff_makes_the_next_call_of_that_method_wait(
    api: respx.MockRouter, source: StackOverflowSource, clock: FakeClock, sleeps: list[float]
) -> None:
    search = load("search_advanced.json")
    search["backoff"] = 10
    search_route, answers_route = mock_success(api, search=search)

    first = await source.search(QUESTION, "learning", 3)

    assert len(first) == 3 and sleeps == []  # answers are another method: no wait
    assert source.status().state == "ready"
    await source.search(QUESTION, "learning", 3)
    assert sleeps == [10.0]  # the search method waited its backoff out, then was called
    assert (search_route.call_count, answers_route.call_count) == (2, 2)

    clock.now += 11  # the second response asked for 10 s again, from its arrival
    await source.search(QUESTION, "learning", 3)
    assert sleeps == [10.0] and search_route.call_count == 3


async def test_a_backoff_longer_than_a_search_may_wait_skips_it(
    api: respx.MockRouter, source: StackOverflowSource, clock: FakeClock, sleeps: list[float]
) -> None:
    search = load("search_advanced.json")
    search["backoff"] = 60
    search_route, _ = mock_success(api, search=search)
    await source.search(QUESTION, "learning", 3)

    with pytest.raises(SourceError, match="back off /search/advanced") as caught:
        await source.search(QUESTION, "learning", 3)

    assert caught.value.kind == "throttled" and sleeps == []
    assert search_route.call_count == 1  # nothing sent during the backoff
    clock.now += 55  # five seconds left: waited out
    await source.search(QUESTION, "learning", 3)
    assert sleeps == [5.0] and search_route.call_count == 2


async def test_throttle_violation_blocks_for_the_seconds_in_the_message(
    api: respx.MockRouter, source: StackOverflowSource, clock: FakeClock, sleeps: list[float]
) -> None:
    search_route = api.get(SEARCH_URL).respond(400, json=load("throttle_violation.json"))

    with pytest.raises(SourceError, match="throttle_violation") as caught:
        await source.search(QUESTION, "debugging", 5)

    assert not isinstance(caught.value, SourceUnavailable)
    assert caught.value.kind == "throttled"
    assert "77316" in str(caught.value)
    assert search_route.call_count == 1  # a throttle is not retried
    assert sleeps == []
    with pytest.raises(SourceUnavailable):
        await source.search(QUESTION, "debugging", 5)
    assert search_route.call_count == 1
    clock.now += 77_315
    assert source.status().state == "skipped"
    assert "throttled" in source.status().reason
    clock.now += 2
    assert source.status().state == "ready"


async def test_throttle_without_seconds_uses_the_default(
    api: respx.MockRouter, source: StackOverflowSource, clock: FakeClock
) -> None:
    body = load("throttle_violation.json")
    body["error_message"] = "too many requests from this IP"
    api.get(SEARCH_URL).respond(400, json=body)

    with pytest.raises(SourceError, match="throttle"):
        await source.search(QUESTION, "debugging", 5)

    clock.now += THROTTLE_DEFAULT_SECONDS - 1
    assert source.status().state == "skipped"
    clock.now += 2
    assert source.status().state == "ready"


async def test_quota_used_up_blocks_until_utc_midnight(
    api: respx.MockRouter, sleeps: list[float], clock: FakeClock
) -> None:
    answers = load("answers.json")
    answers["quota_remaining"] = 0
    search_route, _ = mock_success(api, answers=answers)
    source = make(sleeps, clock, now=datetime(2024, 5, 1, 23, 0, tzinfo=UTC))

    results = await source.search(QUESTION, "learning", 3)

    assert len(results) == 3
    status = source.status()
    assert status.state == "skipped"
    assert "quota" in status.reason and "00:00 UTC" in status.reason
    assert "STACKEXCHANGE_KEY" in status.reason
    with pytest.raises(SourceUnavailable, match="quota"):
        await source.search(QUESTION, "learning", 3)
    assert search_route.call_count == 1
    clock.now += 3_599  # one hour to midnight
    assert source.status().state == "skipped"
    clock.now += 2
    assert source.status().state == "ready"


async def test_quota_used_up_by_the_search_skips_the_answers_call(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    search = load("search_advanced.json")
    search["quota_remaining"] = 0
    _, answers_route = mock_success(api, search=search)

    results = await source.search(QUESTION, "learning", 3)

    assert answers_route.call_count == 0
    assert [r["reference"] for r in results] == [
        "stackoverflow:q8009882",
        "stackoverflow:q3277503",
        "stackoverflow:q71234567",
    ]
    assert "quota" in source.status().reason


# -- the API's own error shapes (the shared client's contract: test_online_contract.py) ---


async def test_unexpected_shape_is_a_source_error(
    api: respx.MockRouter, source: StackOverflowSource
) -> None:
    api.get(SEARCH_URL).respond(200, json={"items": "nope"})

    with pytest.raises(SourceError, match="unexpected response"):
        await source.search(QUESTION, "learning", 3)


async def test_key_never_appears_in_api_errors(
    api: respx.MockRouter, sleeps: list[float], clock: FakeClock
) -> None:
    source = make(sleeps, clock, key=KEY)
    body = {"error_id": 403, "error_name": "access_denied", "error_message": f"bad key {KEY}"}
    api.get(SEARCH_URL).respond(400, json=body)

    with pytest.raises(SourceError, match="access_denied") as caught:
        await source.search(QUESTION, "learning", 3)

    assert KEY not in str(caught.value)


# -- status, factory and pure helpers -----------------------------------------------------


def test_status_is_ready_without_a_key(source: StackOverflowSource) -> None:
    assert str(source.status()) == "ready"
    assert isinstance(source, Source)


def test_factory_reads_key_and_timeouts_from_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    settings = Settings(stackexchange_key=SecretStr(KEY), http_timeout=3.5, connect_timeout=0.5)

    source = make_stackoverflow_source(settings)

    assert isinstance(source, StackOverflowSource)
    assert source.client.policy.timeout == 3.5
    assert source.client.policy.connect_timeout == 0.5
    assert source.client.redact(f"x {KEY} y") == "x *** y"


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("How do I read a file in Python?", ["python"]),
        ("javascript fetch returns undefined", ["javascript"]),  # not "java"
        ("git push rejected from github actions", ["git", "github-actions"]),
        (
            "Docker container cannot reach Postgres from a Django app",
            ["docker", "postgresql", "django"],
        ),
        ("React + TypeScript + Node.js + Docker build fails", ["reactjs", "typescript", "node.js"]),
        ("C# vs C++ and .NET interop", ["c#", "c++", ".net"]),
        ("How do I go to the next line?", []),
        # Korean particles attach to the name and must not hide it.
        ("pandas를 사용해서 csv 파일을 읽을 때 인코딩 오류", ["pandas"]),
        ("python에서 딕셔너리를 값 기준으로 정렬하는 방법", ["python"]),
        ("node.js에서 파일을 비동기로 읽기", ["node.js"]),
        ("Django와 postgres를 docker로 띄우기", ["django", "postgresql", "docker"]),
    ],
)
def test_guess_tags(text: str, tags: list[str]) -> None:
    assert guess_tags(text) == tags


@pytest.mark.parametrize(
    ("date", "version"),
    [
        (datetime(2011, 4, 7, 23, 59, 59, tzinfo=UTC), "2.5"),
        (datetime(2011, 4, 8, tzinfo=UTC), "3.0"),
        (datetime(2018, 5, 1, 23, 59, 59, tzinfo=UTC), "3.0"),
        (datetime(2018, 5, 2, tzinfo=UTC), "4.0"),
    ],
)
def test_licence_version_boundaries(date: datetime, version: str) -> None:
    assert cc_by_sa_version(int(date.timestamp())) == version


def test_normalise_votes_is_monotonic_and_bounded() -> None:
    votes = [-5, 0, 1, 4, 5, 50, 500, 50_000]
    scores = [normalise_votes(v) for v in votes]
    assert scores == sorted(scores)
    assert scores[0] == 0.0 and scores[1] == 0.0
    assert normalise_votes(5) == pytest.approx(0.5)
    assert all(0.0 <= s < 1.0 for s in scores)
    assert len(set(scores[1:])) == len(scores) - 1


def test_html_to_markdown_keeps_identifiers_and_code() -> None:
    text = html_to_markdown(
        "<p>Call <code>read_file()</code> on my_path.</p>"
        "<pre><code>x = a_b * c\n\n\nprint(x)\n</code></pre>"
    )
    assert "Call `read_file()` on my_path." in text
    assert "```\nx = a_b * c\n\n\nprint(x)\n```" in text


def test_clip_markdown_closes_an_open_fence() -> None:
    text = "intro\n\n```\n" + "line\n" * 200 + "```"
    clipped = clip_markdown(text, 300)
    assert len(clipped) < 320
    assert clipped.count("```") % 2 == 0
    assert clipped.endswith("…")
    assert clip_markdown("short", 300) == "short"
