"""The pipeline's bar on the installed docs (`ranking.passes`): the ranking's estimate that
an answer uses the page, with a relevance above nothing; a page asked for by name passes
whatever its estimate, but a class named with its package is not asked for."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from codeweaver.sources.installed_docs import CollectorOptions, InstalledDocsSource, RankingOptions
from codeweaver.sources.installed_docs.model import DocEntry
from codeweaver.sources.installed_docs.ranking import (
    ORDER_BAR,
    RELEVANCE_FLOOR,
    SCORE_THRESHOLD,
    Candidate,
    passes,
)

ENTRY = DocEntry(
    name="fakepd.read_csv", kind="function", module="fakepd", signature="read_csv(path)",
    doc="Read a comma-separated values (csv) file into DataFrame.", package="fakepd",
    display="fakepd", version="1.0",
)  # fmt: skip
BASE = Candidate(0, ENTRY, fused=0.05, bm25=0.3, cosine=0.0, exact=0, prior=1.0)

FRAME = '''
"""Tables."""


class DataFrame:
    """Two-dimensional, size-mutable, potentially heterogeneous tabular data."""

    def to_csv(self, path=None):
        """Write object to a comma-separated values (csv) file."""

    def dropna(self):
        """Remove missing values."""
'''


def test_the_estimate_decides_not_the_relevance_alone() -> None:
    # `pandas.read_csv` for "read a CSV file and skip the first two rows": relevance 0.10,
    # under the old bar (0.13), estimate well above ORDER_BAR.
    assert passes(replace(BASE, score=0.10, order=0.4))
    assert passes(replace(BASE, score=RELEVANCE_FLOOR, order=ORDER_BAR))
    # A page the words resemble but answers rarely use: relevant-looking, still not quoted.
    assert not passes(replace(BASE, score=0.5, order=ORDER_BAR - 0.01))
    # A builtin type's page, zeroed for lack of being spelled as code, never passes on its
    # popularity alone.
    assert not passes(replace(BASE, score=0.0, order=0.9))
    # Asked for by name: passes whatever the estimate.
    assert passes(replace(BASE, score=SCORE_THRESHOLD, order=0.0, asked=True))


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> InstalledDocsSource:
    root = tmp_path_factory.mktemp("bar")
    site = root / "site"
    (site / "fakepd").mkdir(parents=True)
    (site / "fakepd" / "__init__.py").write_text("from fakepd.frame import DataFrame\n")
    (site / "fakepd" / "frame.py").write_text(textwrap.dedent(FRAME).lstrip())
    info = site / "fakepd-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepd\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "fakepd/__init__.py,,\nfakepd/frame.py,,\nfakepd-1.0.dist-info/METADATA,,\n"
    )
    options = CollectorOptions(
        include_stdlib=False, include_builtin_modules=False, include_topics=False, paths=(site,)
    )
    found = InstalledDocsSource(
        root / "index", options=options, ranking=RankingOptions(dense=False)
    )
    found.ensure_index()
    return found


def _asked(source: InstalledDocsSource, question: str) -> dict[str, bool]:
    ranker = source._ranker_for(source._ensure(None, retry=True), None, wait=False)
    return {c.entry.name: c.asked for c in ranker.rank(question)}


def test_a_class_named_with_its_package_is_not_asked_for(source: InstalledDocsSource) -> None:
    # "a fakepd DataFrame" is what the question works on, not the page it asks for.
    asked = _asked(source, "How do I drop the empty rows of a fakepd DataFrame?")
    assert asked["fakepd.DataFrame"] is False
    # A method spelled as code with its class is asked for.
    assert _asked(source, "What does DataFrame.to_csv() write?")["fakepd.DataFrame.to_csv"]
