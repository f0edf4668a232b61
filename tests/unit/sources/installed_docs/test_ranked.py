"""installed_docs without its bar: `ranked` (for MCP callers, who judge relevance
themselves) gives the whole ranked list with scores, `search` (the answer pipeline's) keeps
the bar, and `describe_index` says when the index was built and of what.

The corpus is the real stdlib `re`, `glob` and `fnmatch` sources, ranked without vectors.
"""

from __future__ import annotations

import asyncio
import shutil
import sysconfig
from datetime import UTC, datetime
from pathlib import Path

import pytest

from codeweaver.sources.installed_docs import CollectorOptions, InstalledDocsSource, RankingOptions
from codeweaver.sources.installed_docs.ranking import SCORE_THRESHOLD, passes


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> InstalledDocsSource:
    folder = tmp_path_factory.mktemp("ranked")
    stdlib = folder / "stdlib"
    real = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(real / "re", stdlib / "re", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("glob.py", "fnmatch.py"):
        shutil.copy(real / name, stdlib / name)
    options = CollectorOptions(
        include_builtin_modules=False, include_topics=False, include_distributions=False,
        stdlib_dir=stdlib,
    )  # fmt: skip
    found = InstalledDocsSource(
        folder / "index", options=options, ranking=RankingOptions(dense=False)
    )
    found.ensure_index()
    return found


def names(results: list[dict[str, object]]) -> list[str]:
    return [str(r["reference"]).partition(":")[2].rpartition("@")[0] for r in results]


def test_ranked_keeps_what_the_bar_drops_and_search_keeps_the_bar(
    source: InstalledDocsSource,
) -> None:
    question = "split a string on whitespace"
    barred = source.search_sync(question, 5)
    ranked = asyncio.run(source.ranked(question, "learning", 20))
    assert names(barred)[0] == "re.split"
    assert len(ranked) > len(barred) and names(ranked)[0] == "re.split"
    assert all(isinstance(r["score"], float) and 0 <= r["score"] <= 1 for r in ranked)
    # The bar is a filter of the same ranking: applied to the ranked list, it gives `search`.
    assert source._ranker is not None
    candidates = source._ranker.rank(question)
    assert names(barred) == [c.entry.name for c in candidates if passes(c)][:5]
    assert any(not passes(c) for c in candidates)


def test_a_question_below_the_bar_gets_nothing_from_search_but_a_ranked_list(
    source: InstalledDocsSource,
) -> None:
    question = "glob files recursively"  # `glob.glob`'s estimate is under ORDER_BAR here
    assert source.search_sync(question, 5) == []
    ranked = asyncio.run(source.ranked(question, "learning", 5))
    assert ranked and names(ranked)[0] == "glob.glob"
    assert all(float(r["score"] or 0) < SCORE_THRESHOLD for r in ranked)
    assert asyncio.run(source.ranked("   ", "learning", 5)) == []
    assert asyncio.run(source.ranked(question, "learning", 0)) == []


def test_describe_index_says_when_it_was_built_and_what_it_holds(
    source: InstalledDocsSource, tmp_path: Path
) -> None:
    described = source.describe_index()
    assert described is not None
    built, holds = described
    assert built.tzinfo is not None and built <= datetime.now(UTC)
    assert holds.startswith("CodeWeaver's own environment, Python 3.")
    count = source.ensure_index().entry_count
    assert holds.endswith(f", 0 distributions, {count:,} entries")
    # Before an index is loaded there is nothing to describe, and nothing is built.
    fresh = InstalledDocsSource(tmp_path / "index", options=source.options)
    assert fresh.describe_index() is None
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").iterdir())
