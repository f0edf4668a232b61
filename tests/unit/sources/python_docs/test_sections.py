"""Splitting Python's HTML docs into sections (real pages of the 3.11.2 docs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from codeweaver.sources.python_docs.sections import (
    DocSection,
    doc_pages,
    docs_version,
    find_docs,
    page_sections,
    read_sections,
)

FIXTURE = Path(__file__).parents[3] / "fixtures" / "python_docs" / "html"


def _sections(page: str) -> dict[str, DocSection]:
    html = (FIXTURE / page).read_text("utf-8")
    return {s.anchor: s for s in page_sections(html, page)}


def test_a_section_keeps_its_headings_and_own_text_as_markdown() -> None:
    sections = _sections("tutorial/inputoutput.html")
    methods = sections["methods-of-file-objects"]
    assert methods.title == "Methods of File Objects"  # section number dropped
    assert methods.trail == "Input and Output › Reading and Writing Files"
    assert methods.part == "tutorial"
    assert "```python\n>>> for line in f:" in methods.text  # examples stay code blocks
    assert "`f.readline()`" in methods.text
    assert "¶" not in methods.text and "headerlink" not in methods.text


def test_nested_sections_are_their_own_entries_not_repeated_in_the_parent() -> None:
    sections = _sections("tutorial/inputoutput.html")
    parent = sections["reading-and-writing-files"]
    assert "`f.readline()`" not in parent.text  # it belongs to the nested section
    assert "with open('workfile', encoding=\"utf-8\") as f:" in parent.text
    # Links become their text: no relative hrefs into the local docs.
    assert "](../" not in parent.text and "open()" in parent.text


def test_library_api_descriptions_are_left_to_the_installed_docs() -> None:
    sections = _sections("library/fileinput.html")
    text = "\n".join(s.text for s in sections.values())
    assert "fileinput.input()" in text  # the module's overview prose is kept
    # The description of `fileinput.input` (a `<dl class="py function">`) is not.
    assert "Create an instance of the FileInput class" not in text
    assert (FIXTURE / "library/fileinput.html").read_text("utf-8").count(
        "Create an instance of the"
    ) > 0


def test_docs_are_found_for_the_same_minor_version_only(tmp_path: Path) -> None:
    assert docs_version(FIXTURE) == "3.11.2"
    assert find_docs("3.11.9", FIXTURE) == (FIXTURE.resolve(), "3.11.2")
    assert find_docs("3.12.1", FIXTURE) == (None, "")
    assert find_docs("3.11.9", tmp_path) == (None, "")  # no documentation_options.js


def test_only_the_parts_developers_read_are_indexed(tmp_path: Path) -> None:
    html = tmp_path / "html"
    shutil.copytree(FIXTURE, html)
    (html / "whatsnew").mkdir()
    shutil.copy(FIXTURE / "library/fileinput.html", html / "whatsnew" / "3.11.html")
    pages = [p.relative_to(html).as_posix() for p in doc_pages(html)]
    assert pages == ["library/fileinput.html", "tutorial/inputoutput.html"]
    seen: list[tuple[int, int]] = []
    sections = read_sections(html, lambda done, total: seen.append((done, total)))
    assert seen[-1] == (2, 2)
    assert {s.page for s in sections} == {"tutorial/inputoutput.html", "library/fileinput.html"}
    assert all(len(s.text) >= 120 for s in sections)
