"""Python's own documentation as the machine has it, split into sections.

Debian and Ubuntu ship the HTML docs of each Python in `pythonX.Y-doc` (`apt install
python3-doc` pulls the default Python's) under `/usr/share/doc/pythonX.Y/html`; without
root, `codeweaver setup` unpacks the same package into the cache (`fetch`, `fetched_dir`),
looked at after the system's folders. The docs' own version is in
`_static/documentation_options.js`. Only the parts a developer reads for answers are
indexed (`PARTS`: tutorial, how-tos, FAQ, library and language reference).

Each Sphinx `<section>` becomes one `DocSection`: its heading, the headings above it, and
its own text as Markdown (nested sections are their own entries). In the library
reference the API descriptions (`<dl class="py …">`) are left out: the installed docs
already hold each API from its docstring, at the installed version; the prose around them
(module overviews, examples, recipes) is what those docstrings lack.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, Tag
from markdownify import markdownify

#: Top-level folders of the HTML docs that are indexed.
PARTS = ("tutorial", "howto", "faq", "library", "reference")
#: Sections with less text than this (a heading over a list of sub-sections) are dropped.
MIN_TEXT_CHARS = 120
#: A section's text is cut to this many characters (indexed and stored).
MAX_TEXT_CHARS = 6000
#: Pages larger than this are skipped (no real docs page comes near).
MAX_PAGE_BYTES = 3_000_000
#: Folder of the cache that holds the docs `codeweaver setup` fetched, one folder per X.Y.
FETCHED_DIR = "python-docs"
_VERSION = re.compile(r"""VERSION:\s*['"]([0-9][^'"]*)['"]""")
_BLANK_RUNS = re.compile(r"\n{3,}")
_HEADING = re.compile(r"^h[1-6]$")
_NUMBER = re.compile(r"^\s*(?:[0-9]+\.)+\s*")


@dataclass(frozen=True)
class DocSection:
    """One section of one docs page."""

    page: str  # relative to the html folder, `/`-separated: "tutorial/inputoutput.html"
    anchor: str  # the section's id: "methods-of-file-objects"
    title: str  # its heading, without the section number: "Methods of File Objects"
    trail: str  # the page's title and the headings above: "7. Input and Output › 7.2. …"
    text: str  # its own Markdown, nested sections left out

    @property
    def part(self) -> str:
        return self.page.partition("/")[0]

    def to_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocSection:
        values = {f.name: data.get(f.name, "") for f in fields(cls)}
        if not all(isinstance(v, str) for v in values.values()):
            raise ValueError("a section field is not a string")
        return cls(**values)


def docs_version(html_dir: Path) -> str:
    """The version the HTML docs in `html_dir` document ("3.11.2"), or "" if unreadable."""
    try:
        text = (html_dir / "_static" / "documentation_options.js").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    found = _VERSION.search(text)
    return found.group(1) if found else ""


def fetched_dir(cache_dir: Path, minor: str) -> Path:
    """Where `codeweaver setup` puts the HTML docs of Python `minor` ("3.11") it fetched."""
    return cache_dir / FETCHED_DIR / minor / "html"


def candidate_dirs(version: str, cache_dir: Path | None = None) -> list[Path]:
    """Where a Python `version`'s HTML docs may be, most specific first: the system's
    folders, then those fetched into `cache_dir` (the settings' cache folder), if given."""
    minor = ".".join(version.split(".")[:2])
    found = [
        Path(f"/usr/share/doc/python{minor}/html"),  # Debian/Ubuntu pythonX.Y-doc
        Path(f"/usr/share/doc/python{minor}-doc/html"),
        Path("/usr/share/doc/python3/html"),  # Debian's python3-doc link to the default
        Path("/usr/share/doc/python3-docs/html"),  # Fedora's python3-docs
    ]
    if cache_dir is not None:
        found.append(fetched_dir(cache_dir, minor))
    return found


def find_docs(
    version: str, explicit: Path | None = None, cache_dir: Path | None = None
) -> tuple[Path | None, str]:
    """(HTML folder, its version) of the docs for Python `version` (same major.minor);
    `explicit` (a setting) is the only place looked at when given; `cache_dir`: where
    fetched docs are looked for (the settings' cache folder)."""
    minor = version.split(".")[:2]
    folders = [explicit] if explicit is not None else candidate_dirs(version, cache_dir)
    for folder in folders:
        found = docs_version(folder)
        if found and found.split(".")[:2] == minor:
            return folder.resolve(), found
    return None, ""


def doc_pages(html_dir: Path) -> list[Path]:
    """The indexed pages under `html_dir`, sorted (so builds are reproducible)."""
    pages: list[Path] = []
    for part in PARTS:
        folder = html_dir / part
        if folder.is_dir():
            pages.extend(p for p in folder.rglob("*.html") if p.is_file())
    return sorted(pages)


def _heading(section: Tag) -> str:
    head = section.find(_HEADING, recursive=False)
    if not isinstance(head, Tag):
        return ""
    text = " ".join(head.get_text(" ", strip=True).split())
    return text.removesuffix("¶").rstrip()


def _own_text(section: Tag) -> str:
    """The section's Markdown without its heading, nested sections or API descriptions."""
    kept: list[str] = []
    for child in section.children:
        if isinstance(child, Tag) and (
            child.name == "section"
            or _HEADING.match(child.name)
            or (child.name == "dl" and "py" in (child.get("class") or ()))
        ):
            continue
        kept.append(str(child))
    # Links become their text: relative hrefs into the local docs would mean nothing.
    text = markdownify(
        "".join(kept), heading_style="ATX", code_language="python", strip=["a", "img"]
    )
    text = _BLANK_RUNS.sub("\n\n", text.replace("\xa0", " ")).strip()
    if len(text) > MAX_TEXT_CHARS:
        cut = text.rfind("\n", MAX_TEXT_CHARS // 2, MAX_TEXT_CHARS)
        text = text[: cut if cut > 0 else MAX_TEXT_CHARS].rstrip() + "\n…"
    return text


def page_sections(html: str, page: str) -> Iterator[DocSection]:
    """The sections of one page, in document order."""
    soup = BeautifulSoup(html, "html.parser")
    body = soup.find("div", class_="body") or soup
    if not isinstance(body, Tag):
        return
    for section in body.find_all("section"):
        anchor = str(section.get("id") or "")
        heading = _heading(section)
        if not anchor or not heading:
            continue
        above = [
            _heading(parent) for parent in reversed(section.find_parents("section"))
        ]  # fmt: skip
        text = _own_text(section)
        if len(text) < MIN_TEXT_CHARS:
            continue
        title = _NUMBER.sub("", heading)
        trail = " › ".join(_NUMBER.sub("", h) for h in above if h)
        yield DocSection(page, anchor, title, trail, text)


def read_sections(
    html_dir: Path, on_page: Callable[[int, int], None] | None = None
) -> list[DocSection]:
    """Every indexed section of the docs in `html_dir`; an unreadable page is skipped."""
    pages = doc_pages(html_dir)
    found: list[DocSection] = []
    for done, path in enumerate(pages, 1):
        try:
            if path.stat().st_size <= MAX_PAGE_BYTES:
                html = path.read_text("utf-8", errors="replace")
                found.extend(page_sections(html, path.relative_to(html_dir).as_posix()))
        except OSError:
            pass  # a page removed while reading: the next build sees the change
        if on_page is not None:
            on_page(done, len(pages))
    return found
