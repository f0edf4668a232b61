"""Every relative link and anchor in README.md and docs/*.md leads somewhere that exists,
and every repository path they quote (`tests/…`, `src/…`, `scripts/…`) is there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# A path of the repository as the pages quote it: not the tail of another path
# (`~/src/myapp`), up to a character no path here has; a test id's `::name` is cut off.
QUOTED_PATH = re.compile(r"(?<![\w./~-])(?:\./)?((?:tests|src|scripts)/[A-Za-z0-9_./-]*)")
# Example arguments that name a path in another checkout, not in this one.
NOT_OURS = {"src/click/"}


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def quoted_paths(text: str) -> list[str]:
    """The repository paths `text` quotes, in code blocks too, trailing punctuation cut."""
    found = (m.rstrip(".,:;") for m in QUOTED_PATH.findall(text))
    return [p for p in dict.fromkeys(found) if p not in NOT_OURS]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a link inside a fence is an example). A fence
    closes only on a bare fence of its own character at least as long, so a ```` block
    can show a ``` one."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        marker = re.match(r"^\s{0,3}(`{3,}|~{3,})(.*)$", line)
        if fence is None:
            if marker is None:
                lines.append(line)
            else:
                fence = marker.group(1)
        elif (
            marker is not None
            and marker.group(1)[0] == fence[0]
            and len(marker.group(1)) >= len(fence)
            and not marker.group(2).strip()
        ):
            fence = None
    return lines


def slug(heading: str) -> str:
    """The anchor a forge gives a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(path.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")  # repeated headings: -1, -2
    return found


def targets(path: Path) -> list[str]:
    found: list[str] = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        if (reference := REFERENCE.match(line)) is not None:
            found.append(reference.group(1))
            continue
        found.extend(LINK.findall(CODE_SPAN.sub("", line)))
    return found


def broken_links(path: Path) -> list[str]:
    """Each relative link of `path` whose file or anchor does not exist, as text."""
    broken: list[str] = []
    for target in targets(path):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # another site: not this test's business
        where, _, anchor = target.partition("#")
        linked = (path.parent / where).resolve() if where else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor in {linked.name}")
    return broken


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


@pytest.mark.parametrize(
    "page", [*pages(), ROOT / "SKILL.md"], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_quoted_repository_path_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert [p for p in quoted_paths(text) if not (ROOT / p).exists()] == []


def test_quoted_paths_are_read_as_the_pages_write_them() -> None:
    text = (
        "Run `tests/unit/cli/test_cli.py::test_a`, then ./scripts/test.sh. See "
        "(src/codeweaver/agent/), `~/src/myapp`, --src src/click/,click/ and "
        "tests/fixtures/grounding/<set>.jsonl; not docs/usage.md or mytests/x.py."
    )
    assert quoted_paths(text) == [
        "tests/unit/cli/test_cli.py",
        "scripts/test.sh",
        "src/codeweaver/agent/",
        "tests/fixtures/grounding/",
    ]
    everywhere = {p for page in pages() for p in quoted_paths(page.read_text(encoding="utf-8"))}
    assert len(everywhere) > 20  # the pages' own paths are found, not just this text's


def test_the_readme_links_every_docs_page() -> None:
    readme = set(targets(ROOT / "README.md"))
    linked = {t.partition("#")[0] for t in readme}
    missing = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.relative_to(ROOT).as_posix() not in linked
    ]
    assert missing == []


def test_a_missing_file_a_missing_anchor_and_a_fenced_example_are_told_apart(
    tmp_path: Path,
) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Set-up: the `tool` way\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Twice\n\n## Twice\n\n"
        "[ok](other.md#set-up-the-tool-way) [ok](#twice-1) [ok](https://example.com/x.md)\n"
        "![gone](pictures/gone.png) [bad](other.md#setup) [bad](#thrice) `[code](nowhere.md)`\n"
        "\n```\n[example](nowhere.md)\n```\n"
        "\n````text\n```python\n[example](nowhere.md)\n```\n# not a heading\n````\n"
        "[bad](#not-a-heading)\n\n[ref]: missing.md\n"
    )
    assert broken_links(page) == [
        "pictures/gone.png: no such file",
        "other.md#setup: no heading with that anchor in other.md",
        "#thrice: no heading with that anchor in page.md",
        "#not-a-heading: no heading with that anchor in page.md",
        "missing.md: no such file",
    ]
