"""The steps of a run in words: a handful of lines, in the question's language."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeweaver.presentation.progress import MAX_LINES, Progress, progress_lines

FIXTURES = Path(__file__).parents[2] / "fixtures" / "progress"


def _steps(name: str) -> list[dict[str, Any]]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))["steps"]  # type: ignore[no-any-return]


def _texts(steps: list[dict[str, Any]], language: str = "en") -> list[str]:
    return [line.text for line in progress_lines(steps, language)]


def step(node: str, kind: str, message: str, **data: Any) -> dict[str, Any]:
    return {"id": message, "node": node, "kind": kind, "message": message, "data": data}


def test_a_real_run_of_thirty_one_steps_reads_as_seven_lines() -> None:
    # Recorded from `codeweaver ask … --json` with the local model: Stack Overflow and
    # the web offline, three sources without their key or files, two found results.
    steps = _steps("single_question.json")
    assert len(steps) == 31
    assert _texts(steps) == [
        "Understanding the question",
        "Searching Stack Overflow, installed docs, knowledge base…",
        "Also searching the web…",
        "Found 2: installed docs 1, knowledge base 1 · Stack Overflow, the web unreachable"
        " · sources off: 3",
        "Writing the answer (relevant sources: 1)",
        "Checked the citations: 1 of 2 supported, 1 unsupported removed",
        "Checked the code against the installed versions: 2 API uses, none missing",
    ]


def test_the_same_run_in_korean() -> None:
    texts = _texts(_steps("single_question.json"), "ko")
    assert texts[:2] == ["질문을 파악하는 중", "Stack Overflow, 설치된 문서, 지식 베이스 검색 중…"]
    assert texts[3].startswith("2건 찾음: 설치된 문서 1, 지식 베이스 1")


def test_no_line_names_a_node() -> None:
    steps = _steps("single_question.json")
    nodes = {s["node"] for s in steps}
    assert not any(node in text for text in _texts(steps) for node in nodes)


def test_a_cache_hit_says_so() -> None:
    steps = [
        step("route_query", "think", "rag_required: a new conversation"),
        step("check_cache", "observe", "hit: How do I read a file?"),
    ]
    assert _texts(steps) == [
        "Understanding the question",
        "Found a checked answer to the same question in the cache",
    ]


def test_nothing_searchable_says_why_before_writing() -> None:
    steps = [
        step("classify_intent", "think", "learning (rules)"),
        step("search_github", "observe", "skipped: github: GITHUB_TOKEN not set"),
        step("search_stackoverflow", "observe", "skipped: stackoverflow: disabled"),
        step("search_web", "observe", "skipped: fallback: runs when fewer than 3 documents"),
        step("search_local_code", "observe", "skipped: not used for learning questions"),
        step("filter_and_score", "observe", "kept 0 of 0"),
        step("generate_answer", "act", "writing draft 1 from 0 sources", attempt=1, sources=0),
    ]
    assert _texts(steps) == [
        "Understanding the question",
        "Found nothing · sources off: 2",
        "Writing the answer",
    ]


def test_a_source_still_indexing_is_named() -> None:
    steps = [
        step("search_official_docs", "act", "installed_docs: q", query="q"),
        step(
            "search_official_docs",
            "observe",
            "skipped: installed_docs is not ready (embedding 40%)",
            not_ready="installed_docs",
        ),
        step("evaluate_results", "think", "proceed: 0 relevant of 0 results"),
    ]
    assert _texts(steps)[-1] == "Found nothing · installed docs still being indexed"


def test_a_rewrite_and_a_code_rewrite_are_said() -> None:
    steps = [
        step("check_answer", "think", "rewriting the answer (2 of 2): off topic", retry=True),
        step("check_answer", "think", "rewriting the code without DataFrame.append", retry=True),
        step(
            "check_answer",
            "observe",
            "1 missing",
            checked=3,
            found=1,
        ),
    ]
    assert _texts(steps)[1:] == [
        "Rewriting the answer: off topic",
        "Rewriting the code without DataFrame.append, which the installed versions lack",
        "Checked the code against the installed versions: 1 of 3 API uses missing",
    ]


def test_the_librarian_reads_the_same_way() -> None:
    steps = [
        step("librarian_start", "think", "librarian mode"),
        step("librarian_agent", "think", "search first", tool="search_web", input="q"),
        step("search_web", "act", "web: q", query="q"),
        step("search_web", "observe", "3 results from web", results=3, new=3),
        step("librarian_agent", "think", "enough", tool="answer", input=""),
        step("librarian_check", "observe", "3 of 3", passed=True, claims=3, unsupported=[]),
    ]
    assert _texts(steps) == [
        "Understanding the question",
        "Searching the web…",
        "Found 3: the web 3",
        "Writing the answer",
        "Checked the citations: 3 of 3 supported",
    ]


def test_a_long_run_stays_within_the_budget_and_keeps_the_check() -> None:
    steps: list[dict[str, Any]] = []
    for n in range(20):  # twenty rounds of search, as a runaway loop would make
        steps.append(step("search_web", "act", f"web: q{n}", query=f"q{n}"))
        steps.append(step("search_web", "observe", "1 results from web", answered="web"))
        steps.append(step("evaluate_results", "think", "refine: weak"))
    steps.append(step("filter_and_score", "observe", "kept 1 of 20"))
    steps.append(step("generate_answer", "act", "writing draft 1", attempt=1, sources=1))
    steps.append(step("check_answer", "observe", "ok", passed=True, claims=1, unsupported=[]))
    texts = _texts(steps)
    assert len(texts) <= MAX_LINES
    assert texts[-2:] == [
        "Writing the answer (relevant sources: 1)",
        "Checked the citations: 1 of 1 supported",
    ]


def test_a_translation_says_which_paragraph_it_is_on() -> None:
    steps = [
        step("generate_answer", "act", "writing draft 1", attempt=1, sources=1),
        step("check_answer", "observe", "ok", passed=True, claims=1, unsupported=[]),
        step("check_answer", "act", "translating", paragraphs=0),
        step("check_answer", "act", "translating 1", paragraph=1, paragraphs=2),
        step("check_answer", "act", "translating 2", paragraph=2, paragraphs=2),
    ]
    assert _texts(steps, "ko")[-1] == "답변 번역 중 (문단 2/2)"
    assert _texts(steps[:3], "ko")[-1] == "답변 번역 중"


def test_a_place_in_line_is_a_line_of_its_own() -> None:
    assert Progress("ko").queue(3).text == "빈자리를 기다리는 중 (대기 3번째)"


def test_two_questions_searched_side_by_side_keep_their_own_lines() -> None:
    # Live, the two workers' steps interleave; each line says which question it is about.
    steps = [
        step("create_plan", "think", "multiple_questions (model)"),
        step("Q1/search_official_docs", "act", "installed_docs: jwt", query="jwt"),
        step("Q2/search_official_docs", "act", "installed_docs: cors", query="cors"),
        step("Q2/search_stackoverflow", "act", "stackoverflow: cors", query="cors"),
        step("Q1/search_github", "observe", "skipped: github: GITHUB_TOKEN not set"),
        step("Q2/search_github", "observe", "skipped: github: GITHUB_TOKEN not set"),
        step("Q2/search_official_docs", "observe", "3 results from installed_docs", answered="x"),
        step("Q1/search_official_docs", "observe", "2 results from installed_docs", answered="x"),
        step("Q2/search_stackoverflow", "error", "stackoverflow failed: timed out"),
        step("Q1/evaluate_results", "think", "proceed: 2 relevant of 2 results"),
        step("Q2/evaluate_results", "think", "proceed: 3 relevant of 3 results"),
        step("Q1/check_answer", "observe", "ok", passed=True, claims=1, unsupported=[]),
    ]
    assert _texts(steps) == [
        "Understanding the question",
        "Two questions: answering both side by side",
        "(1) Searching installed docs…",
        "(2) Searching installed docs, Stack Overflow…",
        "(1) Found 2: installed docs 2 · sources off: 1",
        "(2) Found 3: installed docs 3 · Stack Overflow unreachable",
        "(1) Checked the citations: 1 of 1 supported",
    ]


def test_still_writing_is_said_only_while_writing_and_never_takes_the_checks_lines() -> None:
    progress = Progress()
    assert progress.still_writing(0) == []  # not writing yet
    progress.feed(step("generate_answer", "act", "writing", attempt=1, sources=2))
    texts = [line.text for _ in range(20) for line in progress.still_writing(40)]
    assert texts[0] == "Still writing: 40 words so far" and len(texts) == MAX_LINES - 3 - 2
    check = step("check_answer", "observe", "ok", passed=True, claims=1, unsupported=[])
    assert [line.text for line in progress.feed(check)] == [
        "Checked the citations: 1 of 1 supported"
    ]
