"""The source: status, the cached index and its rebuilds, results, and its registration."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.factory import build_sources
from codeweaver.sources.base import Preparable, create_source, source_names
from codeweaver.sources.npm_docs import NpmDocsSource, project_folders
from codeweaver.sources.npm_docs.index import MANIFEST
from tests.unit.sources.npm_docs.conftest import add_package

QUESTION = "How do I add a one-time listener with eventemitter3?"


def _source(project: Path, cache: Path, recheck_interval: float = 60.0) -> NpmDocsSource:
    return NpmDocsSource(cache, project_folders(project), recheck_interval=recheck_interval)


def test_without_node_modules_the_source_is_skipped_and_says_why(tmp_path: Path) -> None:
    root = tmp_path / "service"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    source = _source(root / "src", tmp_path / "cache")
    status = source.status()
    assert status.state == "skipped" and not status.usable
    assert status.reason == (
        f"no node_modules folder in {root / 'src'} or its parents up to the project root {root}"
    )
    (root / "node_modules").mkdir()  # `npm install` while CodeWeaver runs
    assert source.status().usable


def test_the_index_is_built_once_with_progress_then_reused(project: Path, tmp_path: Path) -> None:
    progress: list[tuple[str, int, int]] = []
    first = _source(project, tmp_path / "cache")
    assert isinstance(first, Preparable) and first.status().usable
    started = time.perf_counter()
    first.prepare(lambda *step: progress.append(step))
    seconds = time.perf_counter() - started
    info = first.ensure_index()
    assert info.entry_count == 25 and seconds < 10
    assert ("Reading npm packages", 1, 1) in progress
    assert {"Tokenising npm docs", "Building the npm docs index"} <= {p[0] for p in progress}
    built = (info.path / MANIFEST).stat().st_mtime_ns

    again: list[tuple[str, int, int]] = []
    second = _source(project, tmp_path / "cache")  # a new process: loaded from the cache
    assert second.ensure_index(lambda *step: again.append(step)).path == info.path
    assert again == [] and (info.path / MANIFEST).stat().st_mtime_ns == built


def test_a_changed_version_rebuilds_the_index(project: Path, tmp_path: Path) -> None:
    source = _source(project, tmp_path / "cache", recheck_interval=0.0)
    old = source.ensure_index()
    assert source.search_sync(QUESTION, 3)[0]["reference"] == (
        "npm:eventemitter3@5.0.1#EventEmitter.once"
    )
    manifest_path = project / "node_modules" / "eventemitter3" / "package.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest_path.write_text(json.dumps({**manifest, "version": "5.0.2"}), encoding="utf-8")
    new = source.ensure_index()
    assert new.fingerprint != old.fingerprint and new.path.parent == old.path.parent
    assert not old.path.exists()  # the stale index is removed
    assert source.search_sync(QUESTION, 3)[0]["reference"] == (
        "npm:eventemitter3@5.0.2#EventEmitter.once"
    )
    add_package(project / "node_modules", "@acme/util", "0.1.0")  # a package added
    assert source.ensure_index().fingerprint != new.fingerprint


def test_results_cite_the_package_version_and_api(project: Path, tmp_path: Path) -> None:
    source = _source(project, tmp_path / "cache")
    results = source.search_sync(QUESTION, 5)
    assert [r["reference"] for r in results] == ["npm:eventemitter3@5.0.1#EventEmitter.once"]
    (once,) = results
    assert once["title"] == "EventEmitter.once (method) — eventemitter3 5.0.1"
    assert once["url"] == "https://github.com/primus/eventemitter3"
    assert once["source"] == "npm_docs" and once["attribution"] == "licence: MIT"
    assert once["snippet"].startswith("once<T extends EventEmitter.EventNames<EventTypes>>(")
    assert once["snippet"].endswith("\n\nAdd a one-time listener for a given event.")
    assert once["score"] is not None and 0.5 <= once["score"] < 1
    assert (once["api"], once["api_kind"]) == ("EventEmitter.once", "method")

    (section, *_) = source.search_sync("emit events with a custom context instead of fn.bind", 3)
    assert section["reference"] == "npm:eventemitter3@5.0.1#readme:contextual-emits"
    assert section["url"] == "https://github.com/primus/eventemitter3#contextual-emits"
    assert section["title"] == "Usage › Contextual emits — eventemitter3 5.0.1 README"
    assert "api" not in section  # prose: it goes into the answer's prompt


@pytest.mark.parametrize(
    "question",
    [
        "How do I parse JSON in Python?",  # another language
        "Why does my React component re-render twice?",  # no package here knows
        "How do I sort a list of numbers?",
        "",
    ],
)
def test_questions_the_packages_cannot_answer_get_nothing(
    project: Path, tmp_path: Path, question: str
) -> None:
    assert _source(project, tmp_path / "cache").search_sync(question, 5) == []


def test_the_registry_builds_it_for_the_configured_project(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "npm_docs" in source_names()
    (project / "src").mkdir()
    monkeypatch.setenv("CODEWEAVER_SOURCES", "npm_docs")
    settings = Settings(project=project / "src", data_dir=tmp_path / "data",
                        cache_dir=tmp_path / "cache")  # fmt: skip
    source = create_source("npm_docs", settings)
    assert isinstance(source, NpmDocsSource) and source.status().usable
    assert source.node_modules() == project / "node_modules"  # from src/ up to the root
    assert source.index_root == tmp_path / "cache" / "npm_docs"
    assert list(build_sources(settings)) == ["npm_docs"]
    monkeypatch.setenv("CODEWEAVER_SOURCES", "installed_docs, web")
    assert not Settings().source_enabled("npm_docs")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "all")
    assert Settings().source_enabled("npm_docs")
