"""installed_docs without its relevance bar: `ranked` (for MCP callers, who judge relevance
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
from codeweaver.sources.installed_docs.ranking import SCORE_THRESHOLD


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
    assert names(barred) == ["re.split"]  # the pipeline's bar, unchanged
    assert all(float(r["score"] or 0) >= SCORE_THRESHOLD for r in barred)
    assert len(ranked) > len(barred) and names(ranked)[0] == "re.split"
    assert any(float(r["score"] or 0) < SCORE_THRESHOLD for r in ranked)
    assert all(isinstance(r["score"], float) and 0 <= r["score"] <= 1 for r in ranked)
    # The bar is a filter of the same ranking: applied to the ranked list, it gives `search`.
    passing = [r for r in ranked if float(r["score"] or 0) >= SCORE_THRESHOLD]
    assert passing[:5] == barred


def test_a_question_below_the_bar_gets_nothing_from_search_but_a_ranked_list(
    source: InstalledDocsSource,
) -> None:
    question = "find files matching a pattern in a folder"
    assert source.search_sync(question, 5) == []
    ranked = asyncio.run(source.ranked(question, "learning", 5))
    assert len(ranked) == 5 and "glob.glob" in names(source.search_sync(question, 20, bar=False))
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
