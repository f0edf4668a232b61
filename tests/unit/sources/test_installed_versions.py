"""`installed_versions()` of the installed Python docs and the npm docs, on their fixtures
(six 1.16.0's wheel, eventemitter3 5.0.1's node_modules): {} until the index is loaded,
and never a build for it."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from codeweaver.sources.base import KnowsInstalledVersions
from codeweaver.sources.installed_docs import CollectorOptions, InstalledDocsSource, RankingOptions
from codeweaver.sources.installed_docs.collect import DocEntry
from codeweaver.sources.installed_docs.source import distribution_versions
from codeweaver.sources.npm_docs import NpmDocsSource, project_folders

FIXTURES = Path(__file__).parents[2] / "fixtures"
WHEEL = FIXTURES / "project_env" / "six-1.16.0-py2.py3-none-any.whl"


def _installed_docs(tmp_path: Path) -> InstalledDocsSource:
    """The docs of a site-packages folder holding six 1.16.0 only."""
    site = tmp_path / "site-packages"
    site.mkdir()
    with zipfile.ZipFile(WHEEL) as wheel:
        wheel.extractall(site)
    options = CollectorOptions(
        include_stdlib=False, include_builtin_modules=False, include_topics=False, paths=(site,)
    )
    return InstalledDocsSource(
        tmp_path / "index", options=options, ranking=RankingOptions(dense=False)
    )


def test_installed_docs_knows_six_after_its_index_is_loaded(tmp_path: Path) -> None:
    source = _installed_docs(tmp_path)
    assert isinstance(source, KnowsInstalledVersions)
    assert source.installed_versions() == {}
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").iterdir())
    source.ensure_index()
    assert source.installed_versions() == {"six": "1.16.0"}
    assert source.installed_versions() is source.installed_versions()  # kept per index


def _entry(package: str, display: str, module: str, version: str) -> DocEntry:
    return DocEntry(
        name=f"{module}.f", kind="function", module=module, signature="", doc="",
        package=package, display=display, version=version,
    )  # fmt: skip


def test_a_distribution_is_known_by_its_names_and_its_top_level_modules() -> None:
    entries = [
        _entry("python", "Python", "json", "3.11.9"),
        _entry("scikit-learn", "scikit-learn", "sklearn.model_selection", "1.3.2"),
        _entry("pyyaml", "PyYAML", "yaml", "6.0.1"),
        _entry("pyyaml", "PyYAML", "_yaml", "6.0.1"),
        _entry("google-auth", "google-auth", "google.auth", "2.0.0"),
        _entry("protobuf", "protobuf", "google.protobuf", "4.25.0"),
    ]
    assert distribution_versions(entries) == {
        "scikit-learn": "1.3.2",
        "sklearn": "1.3.2",
        "pyyaml": "6.0.1",
        "PyYAML": "6.0.1",
        "yaml": "6.0.1",
        "google-auth": "2.0.0",
        "protobuf": "4.25.0",
    }  # the stdlib, private modules and a namespace two share (`google`) are left out


def test_npm_docs_knows_eventemitter3_after_its_index_is_loaded(tmp_path: Path) -> None:
    project = tmp_path / "web-app"
    (project / ".git").mkdir(parents=True)
    shutil.copytree(FIXTURES / "npm_project" / "node_modules", project / "node_modules")
    source = NpmDocsSource(tmp_path / "cache", project_folders(project))
    assert isinstance(source, KnowsInstalledVersions)
    assert source.installed_versions() == {}
    assert not (tmp_path / "cache").exists()
    source.ensure_index()
    assert source.installed_versions() == {"eventemitter3": "5.0.1"}
