"""filter_and_score and summarize_results on their own."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.nodes.search_subgraph import (
    filter_and_score,
    is_relevant,
    summarize_results,
)
from tests.fakes import doc, make_deps


async def test_drops_results_without_url_short_or_weak(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    no_url = {**doc(1), "url": ""}
    short = doc(2, text="Too short.")
    weak = doc(3, score=0.1)  # under MIN_SOURCE_SCORE
    good = doc(4, score=0.7)
    unscored = {**doc(5), "score": None}
    out = await filter_and_score(
        {
            "question": "How do I read lines of a file?",
            "search_results": [no_url, short, weak, good, unscored],
        },
        deps,
    )
    kept = [r["url"] for r in out["filtered_results"]]
    assert sorted(kept) == sorted([good["url"], unscored["url"]])
    assert all(0.0 <= r["relevance"] <= 1.0 for r in out["filtered_results"])


async def test_orders_by_relevance_and_keeps_five(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    results = [doc(i, score=0.4 + i / 100) for i in range(1, 9)]
    out = await filter_and_score({"question": "read a file", "search_results": results}, deps)
    kept = out["filtered_results"]
    assert len(kept) == 5
    assert [r["title"] for r in kept] == [f"doc {i}" for i in range(8, 3, -1)]


async def test_summaries_are_short_and_from_the_text(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    long_text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(20))
    long_text += " Reading a file line by line uses a for loop."
    out = await summarize_results(
        {
            "canonical_question": "read a file line by line",
            "filtered_results": [doc(1, text=long_text)],
        },
        deps,
    )
    summary = out["filtered_results"][0]["summary"]
    assert summary.startswith("Sentence number 0")
    assert "Reading a file line by line" in summary
    assert len(summary) <= 420


async def test_an_api_page_is_not_barred_twice(tmp_path: Path) -> None:
    """A page documenting a named API (the installed docs' bar chose it on the ranking's
    estimate; it is cited only where the answer's code calls the API) keeps its place at a
    relevance under MIN_SOURCE_SCORE; the same score on an ordinary page is still dropped."""
    deps, _ = make_deps(tmp_path, {})
    api_page = {**doc(1, score=0.1), "api": "pandas.read_csv", "api_kind": "function"}
    prose = doc(2, score=0.1)  # no `api`: an ordinary document
    assert is_relevant(api_page) and not is_relevant(prose)
    out = await filter_and_score(
        {"question": "read a csv file", "search_results": [api_page, prose]}, deps
    )
    assert [r["url"] for r in out["filtered_results"]] == [api_page["url"]]
