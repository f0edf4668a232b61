"""D13: installed-docs results carry their package's licence, or "", never None."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.sources.installed_docs import (
    CollectorOptions,
    InstalledDocsSource,
    RankingOptions,
)
from codeweaver.sources.installed_docs.licence import Licences
from codeweaver.sources.installed_docs.model import DocEntry
from codeweaver.sources.installed_docs.results import to_result

LONG_LICENSE = "Copyright (c) 2020, Somebody\nAll rights reserved.\n" + "Redistribution " * 20


def _dist(site: Path, name: str, doc: str, metadata: str) -> None:
    module = site / f"{name}.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(f'def {name}_frobnicate():\n    """{doc}"""\n', encoding="utf-8")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: {name}\nVersion: 1.0\n{metadata}", encoding="utf-8"
    )
    (info / "RECORD").write_text(f"{name}.py,,\n{info.name}/METADATA,,\n", encoding="utf-8")


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    _dist(site, "exprpkg", "Frobnicate the widget cache.", "License-Expression: MIT\n")
    long = LONG_LICENSE.replace("\n", "\n        ")
    _dist(
        site,
        "classpkg",
        "Frobnicate the gadget registry.",
        f"License: {long}\nClassifier: License :: OSI Approved :: BSD License\n",
    )
    _dist(site, "barepkg", "Frobnicate the sprocket pool.", "License: UNKNOWN\n")
    return site


def _source(site: Path, tmp_path: Path) -> InstalledDocsSource:
    options = CollectorOptions(
        include_stdlib=False, include_builtin_modules=False, include_topics=False, paths=(site,)
    )
    ranking = RankingOptions(dense=False, threshold=False)
    return InstalledDocsSource(tmp_path / "index", options=options, ranking=ranking)


async def test_results_carry_the_licence_or_nothing(site: Path, tmp_path: Path) -> None:
    source = _source(site, tmp_path)
    attributions: dict[str, object] = {}
    for words in ("widget cache", "gadget registry", "sprocket pool"):
        for result in await source.search(f"frobnicate {words}", "learning", 5):
            attributions[result["title"].split(" — ")[0]] = result.get("attribution")
    assert attributions == {
        "exprpkg.exprpkg_frobnicate": "licence: MIT",
        "classpkg.classpkg_frobnicate": "licence: BSD License",
        "barepkg.barepkg_frobnicate": "",
    }


def test_stdlib_entries_are_psf_licensed() -> None:
    entry = DocEntry(
        "json.loads", "function", "json", "loads(s)", "Decode.", "python", "Python", "3"
    )
    assert to_result(entry, 0.9, Licences(None).of("python", "3"))["attribution"] == (
        "licence: PSF-2.0"
    )


def test_no_result_is_attributed_to_none() -> None:
    entry = DocEntry("x.f", "function", "x", "f()", "Doc.", "nosuchpkg", "nosuchpkg", "1")
    licence = Licences((Path("/nonexistent"),)).of("nosuchpkg", "1")
    result = to_result(entry, 0.5, licence)
    assert result["attribution"] == ""
    assert str(result.get("attribution", "")) != "None"  # what the API and page show


def test_only_the_indexed_version_counts(site: Path) -> None:
    licences = Licences((site,))
    assert licences.of("exprpkg", "1.0") == "MIT"
    assert licences.of("exprpkg", "2.0") == ""
