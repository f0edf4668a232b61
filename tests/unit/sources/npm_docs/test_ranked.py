"""npm_docs without its precision-first bars: `ranked` (for MCP callers, who judge relevance
themselves) gives every entry sharing a word with the question, by score; `search` (the
answer pipeline's) keeps the bars."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codeweaver.sources.npm_docs import NpmDocsSource, project_folders
from codeweaver.sources.npm_docs.index import MIN_SCORE


def _source(project: Path, cache: Path) -> NpmDocsSource:
    return NpmDocsSource(cache, project_folders(project))


def test_ranked_keeps_what_the_bars_drop_and_search_keeps_them(
    project: Path, tmp_path: Path
) -> None:
    source = _source(project, tmp_path / "cache")
    barred = source.search_sync("remove all listeners", 5)
    ranked = asyncio.run(source.ranked("remove all listeners", "learning", 5))
    refs = [r["reference"] for r in ranked]
    assert (
        refs[0]
        == barred[0]["reference"]
        == ("npm:eventemitter3@5.0.1#EventEmitter.removeAllListeners")
    )
    # `listeners` scores well but holds too few of the question's words for the bar.
    assert "npm:eventemitter3@5.0.1#EventEmitter.listeners" in refs
    assert "npm:eventemitter3@5.0.1#EventEmitter.listeners" not in [r["reference"] for r in barred]
    question = "How do I sort a list of numbers?"
    assert source.search_sync(question, 5) == []
    (guess,) = asyncio.run(source.ranked(question, "learning", 5))
    assert 0 < float(guess["score"] or 0) < MIN_SCORE
    assert asyncio.run(source.ranked("How do I parse JSON in Python?", "learning", 5)) == []


def test_describe_index_names_the_packages(project: Path, tmp_path: Path) -> None:
    source = _source(project, tmp_path / "cache")
    assert source.describe_index() is None  # nothing loaded, nothing built
    info = source.ensure_index()
    assert source.describe_index() == (
        info.built_at,
        f"the project's node_modules, 1 package, {info.entry_count} entries",
    )
