"""`eval answers` against the loopback: does the answer cite the post its question came from?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from codeweaver.agent.runner import RunResult
from codeweaver.agent.state import SearchResult
from codeweaver.cli.app import app
from codeweaver.config import Settings
from codeweaver.llm import registry
from codeweaver.llm.scripted import echo_model
from codeweaver.llm.usage import UsageMeter
from codeweaver_eval.answer_systems import loopback_settings, observed, pipeline_answered
from codeweaver_eval.answers_eval import (
    AnswerCase,
    Answered,
    evaluate_answers,
    is_post,
    load_answer_cases,
    origin_checks,
    with_origins,
)
from codeweaver_eval.answers_summary import summarise
from codeweaver_eval.stackexchange.corpus import question_id_of
from codeweaver_eval.stackexchange.loopback import LoggedRequest, StackExchangeLoopback
from tests.unit.codeweaver_eval.stackeval import C_ATOI, ROWS, RUST_BINARY

ORIGIN = 4338904


def _so(qid: int, aid: int) -> SearchResult:
    return SearchResult(
        title=f"question {qid}",
        url=f"https://stackoverflow.com/questions/{qid}/some-title",
        snippet="[accepted] use {:08b}",
        source="stackoverflow",
        score=1.0,
        reference=f"stackoverflow:q{qid}/a{aid}",
    )


DOCS = SearchResult(
    title="std::fmt",
    url="https://doc.rust-lang.org/std/fmt/",
    snippet="…",
    source="docs",
    score=1.0,
)


def _result(answer: str, sources: list[SearchResult]) -> RunResult:
    return RunResult("t", "q", answer, sources, [], "single_topic", "new_topic")


def test_a_reference_or_link_names_the_post_and_no_other() -> None:
    assert is_post(f"stackoverflow:q{ORIGIN}/a1", ORIGIN)
    assert is_post(f"https://stackoverflow.com/questions/{ORIGIN}/slug", ORIGIN)
    assert is_post(f"https://stackoverflow.com/q/{ORIGIN}", ORIGIN)
    assert not is_post(f"stackoverflow:q{ORIGIN}5/a1", ORIGIN)
    assert not is_post(f"https://stackoverflow.com/questions/1{ORIGIN}/x", ORIGIN)
    assert not is_post("https://doc.rust-lang.org/std/fmt/", ORIGIN)


def test_the_cited_origin_is_found_and_cited() -> None:
    sources = [DOCS, _so(ORIGIN, 70496017), _so(555, 556)]
    got = pipeline_answered(_result("Use `{:08b}` [2], see also [1].", sources))
    assert got.source_refs is not None and len(got.source_refs) == 3
    assert got.cited_refs == (
        "https://doc.rust-lang.org/std/fmt/",
        f"stackoverflow:q{ORIGIN}/a70496017 https://stackoverflow.com/questions/{ORIGIN}/some-title",
    )
    assert origin_checks(got, ORIGIN) == (False, True, True)


def test_an_origin_retrieved_but_not_cited_is_found_only() -> None:
    sources = [DOCS, _so(ORIGIN, 70496017), _so(555, 556)]
    got = pipeline_answered(_result("Use the other one [3]. [9] is no source.", sources))
    assert origin_checks(got, ORIGIN) == (False, True, False)
    missing = pipeline_answered(_result("Use [1].", [DOCS, _so(555, 556)]))
    assert origin_checks(missing, ORIGIN) == (False, False, False)
    served = Answered("x", source_refs=(), served_refs=(f"stackoverflow:q{ORIGIN}",))
    assert origin_checks(served, ORIGIN) == (True, False, False)


async def test_rows_and_summary_report_origins_for_the_pipeline_only() -> None:
    cases = [
        AnswerCase("a", "how?", "use x", origin=ORIGIN),
        AnswerCase("b", "why?", "use y", origin=777),
    ]

    async def pipeline(question: str) -> Answered:
        refs = (f"stackoverflow:q{ORIGIN}/a1 https://stackoverflow.com/questions/{ORIGIN}/t",)
        return Answered(
            "see [1]",
            sources=1,
            sources_cited=1,
            source_refs=refs,
            cited_refs=refs,
            served_refs=(f"stackoverflow:q{ORIGIN}",),
            max_query_chars=42 if question == "how?" else 61,
        )

    async def bare(question: str) -> Answered:
        return Answered("use x")

    rows = await evaluate_answers(cases, {"pipeline": pipeline, "bare": bare}, UsageMeter())
    assert [r["origin"] for r in rows] == [ORIGIN, 777]
    first = rows[0]["systems"]
    assert (first["pipeline"]["cites_origin"], first["pipeline"]["origin_found"]) == (True, True)
    assert first["bare"]["cites_origin"] is None and first["bare"]["max_query_chars"] is None
    assert rows[1]["systems"]["pipeline"]["cites_origin"] is False
    summary = summarise(rows, ["pipeline", "bare"])["systems"]
    pipe, alone = summary["pipeline"], summary["bare"]
    assert (pipe["cites_origin"], pipe["cites_origin_rate"]) == (1, 0.5)
    assert (pipe["origin_found"], pipe["origin_served"], pipe["max_query_chars"]) == (1, 1, 61)
    assert alone["cites_origin"] is None and alone["cites_origin_rate"] is None
    assert alone["max_query_chars"] is None


async def test_a_failed_pipeline_answer_counts_as_a_miss() -> None:
    cases = [AnswerCase("a", "how?", "x", origin=ORIGIN), AnswerCase("b", "why?", "y", origin=1)]

    async def pipeline(question: str) -> Answered:
        if question == "why?":
            raise RuntimeError("boom")
        return Answered("[1]", source_refs=(f"stackoverflow:q{ORIGIN}",), cited_refs=())

    rows = await evaluate_answers(cases, {"pipeline": pipeline}, UsageMeter())
    summary = summarise(rows, ["pipeline"])["systems"]["pipeline"]
    assert (summary["origin_found"], summary["origin_found_rate"]) == (1, 0.5)


async def test_observed_reports_what_the_loopback_returned_and_the_longest_query(
    base_url: str, loopback: StackExchangeLoopback
) -> None:
    import httpx

    async def pipeline(question: str) -> Answered:
        async with httpx.AsyncClient() as client:
            params = {"site": "stackoverflow", "sort": "relevance"}
            await client.get(base_url + "/search/advanced", params={**params, "q": question})
            await client.get(base_url + "/similar", params={**params, "title": "atoi"})
        return Answered("x", source_refs=())

    httpx.get(base_url + "/similar", params={"site": "stackoverflow", "title": "before"})
    got = await observed(pipeline, loopback)("print integer binary leading zeros")
    assert got.max_query_chars == len("print integer binary leading zeros")
    assert got.served_refs == (
        f"stackoverflow:q{question_id_of(RUST_BINARY)}",
        f"stackoverflow:q{question_id_of(C_ATOI)}",
    )


def test_title_asks_the_first_line_and_origins_come_from_the_corpus(
    stackeval_file: Path,
) -> None:
    cases = load_answer_cases(stackeval_file, "title")
    assert cases[0].question == "How do I print an integer in binary with leading zeros?"
    assert load_answer_cases(stackeval_file, "post")[0].question.startswith(cases[0].question)
    origins = {RUST_BINARY: 11, C_ATOI: 22}
    assert [c.origin for c in with_origins(cases[:2], origins)] == [11, 22]
    with pytest.raises(ValueError, match="3 questions are not in the served corpus"):
        with_origins(cases, origins)


def test_loopback_settings_keep_local_sources_and_stack_overflow_only() -> None:
    settings = Settings(enabled_sources="web,github,tavily_docs,installed_docs")
    served = loopback_settings(settings, "http://127.0.0.1:9/2.3")
    assert served.stackexchange_url == "http://127.0.0.1:9/2.3"
    assert served.enabled_sources == "installed_docs,stackoverflow"
    assert not any(served.source_enabled(n) for n in ("web", "github", "tavily_docs"))
    assert served.http_cache is False
    everything = loopback_settings(Settings(enabled_sources="all"), "http://x/2.3")
    assert not everything.source_enabled("web") and everything.source_enabled("local_code")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    # Only Stack Overflow (the loopback): no index build, no network.
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    monkeypatch.chdir(tmp_path)


def test_eval_answers_against_the_loopback_checks_each_origin(
    env: None, stackeval_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = echo_model()  # cites source [1] whenever there is one
    model.script["bare_answer"] = "Use a format string."
    monkeypatch.setattr(registry, "create_chat_model", lambda *args, **kwargs: model)
    out = tmp_path / "rows.jsonl"
    args = ["eval", "answers", "--file", str(stackeval_file), "--model", "scripted:echo"]
    args += ["--stackexchange-loopback", "--ask", "title", "--limit", "2", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout[result.stdout.index("{") :])
    pipeline, bare = summary["systems"]["pipeline"], summary["systems"]["bare"]
    assert summary["run"]["stackexchange"] == "loopback"
    assert summary["run"]["sources"] == "stackoverflow"
    # The scripted model cites source [1]; asked by title, that is the origin post.
    assert pipeline["origin_served"] == 2 and pipeline["origin_found"] == 2
    assert pipeline["cites_origin"] == 2 and pipeline["cites_origin_rate"] == 1.0
    assert 0 < pipeline["max_query_chars"] <= 150
    assert bare["cites_origin"] is None
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["origin"] for r in rows] == [question_id_of(r["questionId"]) for r in ROWS[:2]]
    assert rows[0]["question"] == "How do I print an integer in binary with leading zeros?"


def test_korean_questions_need_the_stackeval_corpus(env: None, tmp_path: Path) -> None:
    korean = tmp_path / "ko.jsonl"
    row = {
        "questionId": RUST_BINARY,
        "question": "Rust에서 정수를 앞자리 0과 함께 2진수로 출력하기",
        "answer": "x",
    }
    korean.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    args = ["eval", "answers", "--file", str(korean), "--model", "scripted:echo"]
    result = CliRunner().invoke(app, [*args, "--stackexchange-loopback", "--ask", "korean"])
    assert result.exit_code == 2 and "--loopback-corpus" in result.output


def test_a_place_counts_the_pages_before_it_and_only_searches_rank() -> None:
    second_page = LoggedRequest("/similar", {"page": "2", "pagesize": "3"}, 200, (5, 6))
    assert second_page.ranks() == [("stackoverflow:q5", 4), ("stackoverflow:q6", 5)]
    assert LoggedRequest("/questions/5;6/answers", {}, 200, (5, 6)).ranks() == []
    assert LoggedRequest("/search/advanced", {}, 400).ranks() == []


async def test_the_origin_place_is_its_best_over_the_searches_and_its_median_is_reported() -> None:
    places = {"how?": [(f"stackoverflow:q{ORIGIN}", 3), ("stackoverflow:q9", 1)], "why?": []}
    cases = [AnswerCase(q, q, "x", origin=ORIGIN) for q in ("how?", "why?", "what?")]

    async def pipeline(question: str) -> Answered:
        ranks = places.get(question, [(f"stackoverflow:q{ORIGIN}", 1)])
        served = tuple(ref for ref, _ in ranks)
        return Answered("x", source_refs=(), served_refs=served, served_ranks=tuple(ranks))

    rows = await evaluate_answers(cases, {"pipeline": pipeline}, UsageMeter())
    assert [r["systems"]["pipeline"]["origin_rank"] for r in rows] == [3, None, 1]
    summary = summarise(rows, ["pipeline"])["systems"]["pipeline"]
    # Over the questions whose post came back: places 3 and 1.
    assert (summary["origin_rank_median"], summary["origin_rank_first"]) == (2, 1)
