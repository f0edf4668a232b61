"""python_docs without its precision-first bars: `ranked` (for MCP callers, who judge
relevance themselves) gives every section sharing a word with the question, by score;
`search` (the answer pipeline's) keeps the bars."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from codeweaver.sources.python_docs import PythonDocsSource
from codeweaver.sources.python_docs.index import MIN_SCORE

FIXTURE = Path(__file__).parents[3] / "fixtures" / "python_docs" / "html"


def _source(tmp_path: Path) -> PythonDocsSource:
    html = tmp_path / "html"
    shutil.copytree(FIXTURE, html)
    return PythonDocsSource(tmp_path / "cache", lambda: "3.11.7", explicit_dir=html)


def test_ranked_keeps_what_the_bars_drop_and_search_keeps_them(tmp_path: Path) -> None:
    source = _source(tmp_path)
    barred = source.search_sync("close the file", 5)
    ranked = asyncio.run(source.ranked("close the file", "learning", 5))
    assert [r["reference"] for r in barred] == [
        "python-docs:tutorial/inputoutput.html#reading-and-writing-files@3.11.2"
    ]
    assert ranked[0] == barred[0] and len(ranked) == 5
    scores = [float(r["score"] or 0) for r in ranked]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] < MIN_SCORE
    # Nothing in these pages answers it: the pipeline gets nothing, a caller the best guess.
    question = "How do I center a div with CSS flexbox?"
    assert source.search_sync(question, 3) == []
    assert 0 < len(asyncio.run(source.ranked(question, "learning", 3))) <= 3
    assert asyncio.run(source.ranked("How do I read a file in Kotlin?", "learning", 3)) == []


def test_describe_index_names_the_docs_version_and_size(tmp_path: Path) -> None:
    source = _source(tmp_path)
    assert source.describe_index() is None  # nothing loaded, nothing built
    info = source.ensure_index()
    described = source.describe_index()
    assert described == (info.built_at, f"Python 3.11.2's docs, {info.section_count} sections")
