"""A package README split into sections by its Markdown headings.

The text before the first heading below the title (the title's own paragraph, badges
removed) is the package's introduction; every later heading starts a section named by its
heading path ("Usage › Contextual emits") and anchored by GitHub's slug of its heading.
Headings inside fenced code are code, not headings. Badges, images and HTML tags are
dropped; code blocks stay (they are the usage examples).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# READMEs come from any package in node_modules, so no pattern here may rescan a long
# run once per position. The ATX heading's closing `#`s and spaces are cut in Python
# (`_atx`): a lazy `(.*?)` before optional runs of spaces is quadratic in those spaces.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX_OPEN = re.compile(r" {0,3}(#{1,6})[ \t]+")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Link text holds no bracket and a target no parenthesis but one balanced pair (a wiki
# URL's "_(bar)"), so each attempt stops at the next `[` or `(` instead of running to the
# end of an unclosed `[` or `](` repeated thousands of times.
_TARGET = r"\([^()]*(?:\([^()]*\)[^()]*)*\)"
_IMAGE = re.compile(r"!\[[^\[\]]*\]" + _TARGET)
_EMPTY_LINK = re.compile(r"\[\s*\]" + _TARGET)
_LINK = re.compile(r"\[([^\[\]]+)\]" + _TARGET)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_BLANKS = re.compile(r"\n{3,}")
MIN_SECTION_CHARS = 40  # a heading over a line of text says too little to be a result


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]  # headings from level 2 down; () for the introduction
    anchor: str  # GitHub's slug of the last heading ("" for the introduction)
    text: str


def heading_text(raw: str) -> str:
    """A heading as read: links and images reduced to their text, code marks dropped."""
    text = _IMAGE.sub("", raw)
    text = _LINK.sub(r"\1", text)
    return " ".join(_TAG.sub("", text).replace("`", "").replace("*", "").split())


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def clean(text: str) -> str:
    """Markdown prose without badges, images and HTML tags, blank runs squeezed."""
    text = _without_comments(text)
    text = _EMPTY_LINK.sub("", _IMAGE.sub("", text))
    text = _TAG.sub("", text)
    lines = [line.rstrip() for line in text.splitlines()]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def _without_comments(text: str) -> str:
    """`text` without its `<!-- … -->` comments. An unclosed one is kept, and the search
    stops there: no later comment can close either (a regex would rescan to the end
    from every later `<!--`)."""
    kept: list[str] = []
    done = 0
    while (start := text.find("<!--", done)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        kept.append(text[done:start])
        done = end + 3
    kept.append(text[done:])
    return "".join(kept)


def _atx(line: str) -> tuple[int, str] | None:
    """(level, raw text) of an ATX heading line ("## Usage ##"), else None."""
    opened = _ATX_OPEN.match(line)
    if opened is None:
        return None
    body = line[opened.end() :]
    # The text ends before the trailing spaces, or before a closing run of `#` that
    # follows a space ("## Usage ##"); "C#" keeps its `#`.
    end = len(body.rstrip(" \t"))
    unhashed = body[:end].rstrip("#")
    if len(unhashed) < end and unhashed.endswith((" ", "\t")):
        end = len(unhashed.rstrip(" \t"))
    return len(opened.group(1)), body[:end]


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, heading) of each heading outside fenced code; a setext
    heading's index is its text line, and its underline is blanked."""
    found: list[tuple[int, int, str]] = []
    fence = ""
    for i, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        atx = _atx(line)
        if atx:
            found.append((i, atx[0], heading_text(atx[1])))
            continue
        setext = _SETEXT.match(line)
        previous = lines[i - 1].strip() if i else ""
        if setext and previous and not previous.startswith(("-", "*", "+", ">", "|")):
            if found and found[-1][0] == i - 1:
                continue
            found.append((i - 1, 1 if setext.group(1)[0] == "=" else 2, heading_text(previous)))
            lines[i] = ""
    return found


def split_readme(text: str, max_sections: int, max_chars: int) -> list[Section]:
    """The introduction and up to `max_sections` sections with text, each cut to
    `max_chars`; a README without headings is all introduction."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headings = _headings(lines)
    # The title is the first heading when it is the only one of its level at the top.
    top = min((level for _, level, _ in headings), default=1)
    title_level = top if sum(1 for h in headings if h[1] == top) == 1 else 0
    body = [h for h in headings if h[1] > title_level]
    sections: list[Section] = []
    intro_end = body[0][0] if body else len(lines)
    intro_lines = [
        line for i, line in enumerate(lines[:intro_end])
        if not (headings and i == headings[0][0] and title_level)
    ]  # fmt: skip
    intro = clean("\n".join(intro_lines))
    if intro:
        sections.append(Section((), "", _cut(intro, max_chars)))
    path: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for n, (start, level, heading) in enumerate(body):
        end = body[n + 1][0] if n + 1 < len(body) else len(lines)
        path = [p for p in path if p[0] < level] + [(level, heading)]
        anchor = slug(heading)
        # GitHub numbers repeated headings' anchors: `usage`, `usage-1`, …
        seen[anchor] = seen.get(anchor, -1) + 1
        if seen[anchor]:
            anchor = f"{anchor}-{seen[anchor]}"
        content = clean("\n".join(lines[start + 1 : end]))
        if len(content) < MIN_SECTION_CHARS or not heading:
            continue
        names = tuple(h for _, h in path)
        sections.append(Section(names, anchor, _cut(content, max_chars)))
        if len(sections) > max_sections:
            break
    return sections


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip() + " …"
