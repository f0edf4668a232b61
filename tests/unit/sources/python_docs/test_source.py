"""The python_docs source: status, the cached index, results and its search node."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codeweaver.agent.search_nodes import SEARCH_NODES
from codeweaver.config import Settings
from codeweaver.sources.base import create_source, source_names
from codeweaver.sources.python_docs import PythonDocsSource
from codeweaver.sources.python_docs.sections import read_sections

FIXTURE = Path(__file__).parents[3] / "fixtures" / "python_docs" / "html"
README_QUESTION = "How do I read a file line by line in Python?"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    html = tmp_path / "html"
    shutil.copytree(FIXTURE, html)
    return html


def _source(docs: Path, cache: Path, version: str = "3.11.7") -> PythonDocsSource:
    return PythonDocsSource(cache, lambda: version, explicit_dir=docs)


def test_the_readme_question_cites_the_tutorial_section(docs: Path, tmp_path: Path) -> None:
    results = _source(docs, tmp_path / "cache").search_sync(README_QUESTION, 3)
    assert results, "the tutorial answers this question"
    top = results[0]
    assert top["reference"] == (
        "python-docs:tutorial/inputoutput.html#methods-of-file-objects@3.11.2"
    )
    assert top["url"] == (
        "https://docs.python.org/3.11/tutorial/inputoutput.html#methods-of-file-objects"
    )
    assert top["title"].startswith("Input and Output › Reading and Writing Files › Methods")
    assert top["attribution"] == "licence: PSF-2.0"
    assert top["source"] == "python_docs"
    assert "for line in f:" in top["snippet"]
    assert 0.65 <= float(top["score"] or 0) < 1


@pytest.mark.parametrize(
    "question",
    [
        "How do I center a div with CSS flexbox?",  # nothing in these pages answers it
        "How do I read a file line by line in Kotlin?",  # another language
        "   ",
    ],
)
def test_questions_the_docs_do_not_answer_get_nothing(
    docs: Path, tmp_path: Path, question: str
) -> None:
    assert _source(docs, tmp_path / "cache").search_sync(question, 3) == []


def test_docs_of_another_python_are_not_used_and_the_status_says_how_to_get_them(
    docs: Path, tmp_path: Path
) -> None:
    source = _source(docs, tmp_path / "cache", version="3.12.4")
    status = source.status()
    assert not status.usable
    assert status.reason == f"no Python 3.12 HTML docs in {docs} (CODEWEAVER_PYTHON_DOCS)"
    default = PythonDocsSource(tmp_path / "cache", lambda: "2.9.1")  # no such docs anywhere
    reason = default.status().reason
    assert reason.startswith("Python 2.9's docs are not installed")
    assert "apt install python2.9-doc" in reason


def test_the_index_is_built_once_with_progress_then_rebuilt_when_the_docs_change(
    docs: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    phases: list[tuple[str, int, int]] = []
    first = _source(docs, cache).ensure_index(lambda *p: phases.append(p))
    assert phases and phases[-1] == ("Reading Python 3.11.2's docs", 2, 2)
    assert first.seconds > 0 and first.section_count == len(read_sections(docs)) > 5
    phases.clear()
    again = _source(docs, cache).ensure_index(lambda *p: phases.append(p))
    assert phases == [] and again.seconds == 0.0  # loaded, not rebuilt
    assert again.fingerprint == first.fingerprint
    page = docs / "library" / "fileinput.html"
    os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 10**9))  # upgraded
    rebuilt = _source(docs, cache).ensure_index(lambda *p: phases.append(p))
    assert phases and rebuilt.fingerprint != first.fingerprint
    assert [p.name for p in cache.iterdir()] == [rebuilt.fingerprint[:32]]  # old one removed


def test_a_corrupt_index_is_rebuilt(docs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    info = _source(docs, cache).ensure_index()
    (cache / info.fingerprint[:32] / "sections.jsonl").write_text("{broken", "utf-8")
    results = _source(docs, cache).search_sync(README_QUESTION, 1)
    assert results[0]["reference"].endswith("#methods-of-file-objects@3.11.2")


def test_registered_with_its_own_search_node(docs: Path, tmp_path: Path) -> None:
    assert "python_docs" in source_names()
    assert SEARCH_NODES["search_python_docs"].sources == ("python_docs",)
    settings = Settings(cache_dir=tmp_path / "cache", python_docs=docs)
    source = create_source("python_docs", settings)
    assert isinstance(source, PythonDocsSource)
    assert source.index_dir == tmp_path / "cache" / "python_docs"
