"""The relay to the real Stack Exchange API, tested against the loopback as its upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver.config import Settings
from codeweaver.llm import registry
from codeweaver.llm.usage import UsageMeter
from codeweaver.sources.base import SourceError
from codeweaver.sources.http import HttpPolicy
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver_eval.answers_eval import AnswerCase, Answered, evaluate_answers
from codeweaver_eval.stackexchange.corpus import question_id_of
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback
from codeweaver_eval.stackexchange.relay import (
    StackExchangeRelay,
    observed_live,
    origin_by_title,
    relay_settings,
    serve_relay,
)
from tests.unit.codeweaver_eval.stackeval import C_ATOI, RUST_BINARY

KEY = "relay-test-key-0123"
RUST_TITLE = "How do I print an integer in binary with leading zeros?"
SITE = {"site": "stackoverflow"}


@pytest.fixture
def relay(base_url: str) -> StackExchangeRelay:
    return StackExchangeRelay(KEY, budget=3, upstream=base_url)


@pytest.fixture
def relay_url(relay: StackExchangeRelay) -> Iterator[str]:
    with serve_relay(relay) as url:
        yield url


def _get(base: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(base + path, params={**SITE, **params})


def test_bodies_and_statuses_pass_through_unchanged(
    relay_url: str, base_url: str, relay: StackExchangeRelay
) -> None:
    relayed = _get(relay_url, "/search/advanced", q="leading zeros", filter="withbody")
    direct = _get(base_url, "/search/advanced", q="leading zeros", filter="withbody")
    assert relayed.status_code == direct.status_code == 200
    # The direct call came second: the loopback's quota went down by one meanwhile.
    assert relayed.json() == {
        **direct.json(),
        "quota_remaining": direct.json()["quota_remaining"] + 1,
    }

    error = _get(relay_url, "/similar", title="")
    assert error.status_code == 400
    assert error.json() == _get(base_url, "/similar", title="").json()
    assert error.json()["error_name"] == "bad_parameter"
    assert _get(relay_url, "/no/such/method").status_code == 404  # the loopback's own status

    statuses = [(r.path, r.status) for r in relay.requests]
    assert statuses == [("/search/advanced", 200), ("/similar", 400), ("/no/such/method", 404)]
    assert relay.requests[0].question_ids == (question_id_of(RUST_BINARY),)
    assert relay.used == 3


def test_the_key_goes_upstream_but_is_never_logged(
    relay_url: str, relay: StackExchangeRelay, loopback: StackExchangeLoopback
) -> None:
    _get(relay_url, "/similar", title="atoi", key="the-clients-own")
    assert loopback.requests[-1].params["key"] == KEY
    logged = relay.requests[-1]
    assert "key" not in logged.params and logged.params["title"] == "atoi"
    assert KEY not in repr(relay.requests)


async def test_the_budget_stops_upstream_calls_and_the_client_backs_off(
    relay_url: str, relay: StackExchangeRelay, loopback: StackExchangeLoopback
) -> None:
    for _ in range(3):
        assert _get(relay_url, "/similar", title="atoi").status_code == 200
    over = _get(relay_url, "/similar", title="atoi")
    assert over.status_code == 400
    assert over.json() == {
        "error_id": 502,
        "error_name": "throttle_violation",
        "error_message": "request budget of 3 used up for this run",
    }
    assert len(loopback.requests) == 3 and relay.used == 3
    assert relay.requests[-1].status == 400

    source = StackOverflowSource(None, base_url=relay_url, policy=HttpPolicy(retries=0))
    try:
        with pytest.raises(SourceError) as caught:
            await source.search("print integer binary leading zeros", "learning", 5)
        assert caught.value.kind == "throttled"
        assert source.status().state == "skipped"
    finally:
        await source.aclose()
    assert len(loopback.requests) == 3


async def test_an_unreachable_upstream_is_a_temporary_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    down = StackExchangeRelay(
        KEY, budget=5, upstream="http://x/2.3", transport=httpx.MockTransport(refuse)
    )
    with serve_relay(down) as url:
        response = _get(url, "/similar", title="atoi")
    assert response.status_code == 503 and response.json()["error_id"] == 503
    assert down.used == 1 and down.requests[-1].status == 503


def test_the_origin_is_the_returned_post_with_the_question_title(
    relay_url: str, relay: StackExchangeRelay
) -> None:
    assert origin_by_title(relay, RUST_TITLE) is None  # nothing returned yet
    _get(relay_url, "/search/advanced", q="leading zeros")
    _get(relay_url, "/similar", title="atoi")
    assert origin_by_title(
        relay, "  how do I print an INTEGER in binary\nwith leading zeros? "
    ) == (question_id_of(RUST_BINARY))
    assert origin_by_title(relay, "implicit declaration of function ‘atoi’?") == question_id_of(
        C_ATOI
    )
    assert origin_by_title(relay, "How do I print an integer in binary?") is None
    assert origin_by_title(relay, "") is None


def test_titles_are_unescaped_and_answers_carry_no_title() -> None:
    def upstream(request: httpx.Request) -> httpx.Response:
        items = [{"question_id": 7, "title": "Why isn&#39;t a &amp; b &lt;int&gt;?"}]
        if request.url.path.endswith("/answers"):
            items = [{"answer_id": 8, "question_id": 7}]
        assert request.url.params["key"] == KEY
        return httpx.Response(200, json={"items": items, "backoff": 10})

    live = StackExchangeRelay(
        KEY, budget=5, upstream="https://api.example/2.3", transport=httpx.MockTransport(upstream)
    )
    with serve_relay(live) as url:
        search = _get(url, "/search/advanced", q="a b")
        _get(url, "/questions/7/answers")
    assert search.json()["backoff"] == 10  # throttling fields reach the client
    assert live.titles() == {7: "Why isn't a & b <int>?"}
    assert origin_by_title(live, "why isn't a & b <int>?") == 7
    assert [r.question_ids for r in live.requests] == [(7,), (7,)]
    assert live.requests[0].ranks() == [("stackoverflow:q7", 1)]


async def test_observed_live_finds_the_origin_and_the_run_checks_it(
    relay_url: str, relay: StackExchangeRelay
) -> None:
    qid = question_id_of(RUST_BINARY)

    async def pipeline(question: str) -> Answered:
        async with httpx.AsyncClient() as client:
            params = {**SITE, "q": "leading zeros", "sort": "relevance"}
            await client.get(relay_url + "/search/advanced", params=params)
        ref = f"stackoverflow:q{qid}/a1 https://stackoverflow.com/questions/{qid}/x"
        return Answered(
            "see [1]", sources=1, sources_cited=1, source_refs=(ref,), cited_refs=(ref,)
        )

    answer = observed_live(pipeline, relay, {"binary?": RUST_TITLE})
    got = await answer("binary?")
    assert got.origin == qid
    assert got.served_refs == (f"stackoverflow:q{qid}",)
    assert got.served_ranks == ((f"stackoverflow:q{qid}", 1),)
    assert got.max_query_chars == len("leading zeros")
    assert (await answer("unknown?")).origin is None

    rows = await evaluate_answers(
        [AnswerCase("a", "binary?", "x")], {"pipeline": answer}, UsageMeter()
    )
    run = rows[0]["systems"]["pipeline"]
    assert (run["origin_served"], run["origin_found"], run["cites_origin"]) == (True, True, True)
    assert run["origin_rank"] == 1


def test_relay_settings_leave_the_key_to_the_relay() -> None:
    settings = Settings(enabled_sources="web,installed_docs", stackexchange_key=KEY)
    live = relay_settings(settings, "http://127.0.0.1:9/2.3")
    assert live.stackexchange_url == "http://127.0.0.1:9/2.3"
    assert live.stackexchange_key is None and live.http_cache is False
    assert live.enabled_sources == "installed_docs,stackoverflow"


# --------------------------------------------------------------------------- the command


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    monkeypatch.delenv("STACKEXCHANGE_KEY", raising=False)
    monkeypatch.chdir(tmp_path)

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model must not load")

    monkeypatch.setattr(registry, "create_chat_model", no_model)


def _live(stackeval_file: Path, *more: str, input: str | None = None) -> Any:
    args = ["eval", "answers", "--file", str(stackeval_file), "--model", "scripted:echo"]
    return CliRunner().invoke(app, [*args, "--stackexchange-live", *more], input=input)


def test_a_live_run_needs_a_key(env: None, stackeval_file: Path) -> None:
    result = _live(stackeval_file, "--yes")
    assert result.exit_code == 2
    assert "STACKEXCHANGE_KEY" in result.output
    assert "https://stackapps.com/apps/oauth/register" in result.output


def test_live_and_loopback_exclude_each_other(
    env: None, stackeval_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKEXCHANGE_KEY", KEY)
    result = _live(stackeval_file, "--stackexchange-loopback", "--yes")
    assert result.exit_code == 2 and "exclude each other" in result.output
    args = ["eval", "answers", "--file", str(stackeval_file), "--request-budget", "5"]
    alone = CliRunner().invoke(app, args)
    assert alone.exit_code == 2 and "--stackexchange-live" in alone.output


def test_declining_makes_no_request(
    env: None,
    stackeval_file: Path,
    base_url: str,
    loopback: StackExchangeLoopback,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STACKEXCHANGE_KEY", KEY)
    more = ["--limit", "2", "--live-upstream", base_url]
    result = _live(stackeval_file, *more, input="n\n")
    assert result.exit_code == 1, result.output
    assert "2 questions, at most 16 requests to 127.0.0.1" in result.output
    assert "request budget: 16" in result.output
    assert KEY not in result.output
    budgeted = _live(stackeval_file, *more, "--request-budget", "5", input="n\n")
    assert budgeted.exit_code == 1 and "at most 5 requests" in budgeted.output
    assert loopback.requests == []


def test_korean_questions_need_the_stackeval_file_for_titles(
    env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKEXCHANGE_KEY", KEY)
    korean = tmp_path / "ko.jsonl"
    korean.write_text(f'{{"questionId": "{RUST_BINARY}", "question": "정수", "answer": "x"}}\n')
    result = _live(korean, "--ask", "korean", "--yes")
    assert result.exit_code == 2 and "--loopback-corpus" in result.output
