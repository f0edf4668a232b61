"""Source policy and the parallel fan-out: one Send per usable source, failures contained."""

from __future__ import annotations

import time
from pathlib import Path

from codeweaver.agent.runner import Assistant
from codeweaver.sources.base import SourceError
from tests.fakes import FakeSource, doc, make_deps

SCRIPT = {
    "classify_intent": '{"intent": "debugging"}',
    "generate_answer": "Wrap the call in try/except [1].",
}


def searched_nodes(steps: list[dict[str, object]]) -> set[str]:
    return {
        str(s["node"]) for s in steps if s["kind"] == "act" and "query" in (s.get("data") or {})
    }


async def test_two_failing_sources_do_not_fail_the_answer(tmp_path: Path) -> None:
    so = FakeSource("stackoverflow", error=SourceError("HTTP 503 from stackoverflow"))
    gh = FakeSource("github", delay=5.0)
    text = "Wrap the call in try/except to handle a KeyError. " * 2
    docs = FakeSource("installed_docs", [doc(7, text=text)])
    deps, _ = make_deps(tmp_path, SCRIPT, [so, gh, docs])
    deps.source_timeout = 0.2
    started = time.perf_counter()
    result = await Assistant(deps).ask("Why does my dict lookup raise KeyError?")
    assert time.perf_counter() - started < 2.0  # the slow source was cut at its timeout

    assert [s["url"] for s in result.sources] == [doc(7)["url"]]
    assert "[1]" in result.answer
    errors = [str(s["message"]) for s in result.steps if s["kind"] == "error"]
    assert any("HTTP 503" in e for e in errors)
    assert any("github timed out" in e for e in errors)
    assert searched_nodes(result.steps) >= {
        "search_stackoverflow",
        "search_github",
        "search_official_docs",
    }


async def test_policy_skips_local_code_for_learning_questions(tmp_path: Path) -> None:
    code = FakeSource("local_code")
    docs = FakeSource("installed_docs")
    deps, _ = make_deps(
        tmp_path, {**SCRIPT, "classify_intent": '{"intent": "learning"}'}, [code, docs]
    )
    result = await Assistant(deps).ask("What is a context manager?")
    assert code.queries == []
    skipped = [s["message"] for s in result.steps if s["node"] == "search_local_code"]
    assert skipped == ["skipped: not used for learning questions"]


async def test_github_issues_are_searched_for_debugging_questions_only(tmp_path: Path) -> None:
    issues = FakeSource("github_issues")
    deps, _ = make_deps(tmp_path, SCRIPT, [issues, FakeSource("installed_docs")])
    result = await Assistant(deps).ask("Why does my loop raise IndexError?")
    assert "search_github_issues" in searched_nodes(result.steps)
    assert issues.queries

    issues = FakeSource("github_issues")
    deps, _ = make_deps(
        tmp_path / "learning",
        {**SCRIPT, "classify_intent": '{"intent": "learning"}'},
        [issues, FakeSource("installed_docs")],
    )
    result = await Assistant(deps).ask("What is a context manager?")
    assert issues.queries == []
    skipped = [s["message"] for s in result.steps if s["node"] == "search_github_issues"]
    assert skipped == ["skipped: not used for learning questions"]


async def test_debugging_asks_stackoverflow_for_more_results(tmp_path: Path) -> None:
    so = FakeSource("stackoverflow", [doc(i) for i in range(1, 20)])
    deps, _ = make_deps(tmp_path, SCRIPT, [so])
    result = await Assistant(deps).ask("Why does my loop raise IndexError?")
    acts = [s for s in result.steps if s["node"] == "search_stackoverflow" and s["kind"] == "act"]
    assert acts and acts[0]["data"]["limit"] == 2 * deps.settings.results_per_source


async def test_only_usable_sources_are_searched(tmp_path: Path) -> None:
    docs = FakeSource("installed_docs")
    deps, _ = make_deps(tmp_path, SCRIPT, [docs])
    result = await Assistant(deps).ask("Why does my loop raise IndexError?")
    assert searched_nodes(result.steps) == {"search_official_docs"}
    reasons = {
        s["node"]: s["message"]
        for s in result.steps
        if s["kind"] == "observe" and str(s["message"]).startswith("skipped")
    }
    assert reasons["search_stackoverflow"] == "skipped: stackoverflow: not configured"


async def test_no_usable_source_still_reaches_an_answer(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT, [])
    result = await Assistant(deps).ask("Why does my loop raise IndexError?")
    assert result.sources == []
    # Nothing backs the answer, and it says so before the model's text.
    note = "_No source was found: this answer comes from the model's general knowledge._"
    assert result.answer == f"{note}\n\nWrap the call in try/except."
    assert "search_official_docs" in {s["node"] for s in result.steps}


async def test_duplicate_urls_across_sources_are_merged(tmp_path: Path) -> None:
    shared = {**doc(1), "reference": ""}
    so = FakeSource("stackoverflow", [shared, doc(2)])
    docs = FakeSource("installed_docs", [{**shared, "score": 0.9}])
    deps, _ = make_deps(tmp_path, SCRIPT, [so, docs])
    result = await Assistant(deps).ask("Why does my loop raise IndexError?")
    urls = [s["url"] for s in result.sources]
    assert sorted(urls) == sorted({doc(1)["url"], doc(2)["url"]})
