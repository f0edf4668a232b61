"""A hostile README in node_modules cannot hang the npm docs build.

A 120 KB heading line of spaces and tabs once took the heading regex minutes (its lazy
text rescanned the run before every optional closing `#`), and runs of `[` or `![` made
the link and image patterns quadratic. Every README line is read in linear time now.
"""

from __future__ import annotations

import pytest

from codeweaver.sources.npm_docs.dts import clean_jsdoc
from codeweaver.sources.npm_docs.readme import Section, clean, heading_text, split_readme
from tests.timing import seconds

SIZE = 120_000  # characters on one line; READMEs up to 1 MB are read
BUDGET = 1.0  # seconds for a whole README


def readme(line: str) -> str:
    return f"# rp\n\nPads strings.\n\n{line}\n\nCall rightPad with a string and a width.\n"


HOSTILE = {
    "heading padded with spaces and tabs": "## Usage" + " \t" * (SIZE // 2) + "x",
    "heading closed by a long run": "## Usage" + " " * (SIZE // 2) + "#" * (SIZE // 2) + "x",
    "unclosed link texts": "[" * SIZE,
    "unclosed images": "![" * (SIZE // 2),
    "unclosed link targets": "[a](" * (SIZE // 4),
    "empty links never closed": "[](" * (SIZE // 3),
    "unclosed tags": "<a" * (SIZE // 2),
    "unclosed comments": "<!--" * (SIZE // 4),
    "heading of brackets": "## " + "[a](" * (SIZE // 4),
    "heading of unclosed link texts": "## " + "[" * SIZE,
}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_a_hostile_readme_line_is_read_within_a_second(shape: str) -> None:
    text = readme(HOSTILE[shape])
    assert seconds(lambda: split_readme(text, 20, 2000)) < BUDGET


def test_the_outside_testers_readme_is_split_as_a_normal_one() -> None:
    text = "# rp\n\n## Usage" + " \t" * 60000 + "x\n\nCall rightPad with a string and a width.\n"
    assert seconds(lambda: split_readme(text, 20, 2000)) < BUDGET
    sections = split_readme(text, 20, 2000)
    assert sections == [
        Section(("Usage x",), "usage-x", "Call rightPad with a string and a width.")
    ]


def test_headings_links_and_comments_read_as_markdown() -> None:
    """As before the fix, but for a link whose URL holds a pair of parentheses: it is
    now read whole, where it left a stray ")" behind."""
    text = (
        "# pad ![npm](https://img.shields.io/npm/v/pad.svg)\n\n"
        "[![build](https://ci.example/badge.svg)](https://ci.example)\n"
        "Pads a string. <!-- hidden -->See [the wiki](https://w.example/Pad_(text)).\n\n"
        '## Usage ##\n\nCall `pad(text, width)`; see [docs](https://docs.example "Docs").\n\n'
        "## C# port\n\nThe C# port lives in its own package, with the same options.\n"
    )
    sections = split_readme(text, 20, 2000)
    assert [s.path for s in sections] == [(), ("Usage",), ("C# port",)]
    assert sections[0].text == "Pads a string. See [the wiki](https://w.example/Pad_(text))."
    assert heading_text("[the wiki](https://w.example/Pad_(text)) and <b>bold</b>") == (
        "the wiki and bold"
    )
    assert clean("a <!-- b --> c <!-- d") == "a  c <!-- d"


def test_a_padded_jsdoc_link_is_read_within_a_second() -> None:
    """The declarations' `{@link target | text}` had three optional runs of spaces in a
    row: cubic in the spaces of an unclosed link."""
    padded = "/** {@link a" + " " * SIZE + "| x */"
    many = "/** " + "{@link a " * (SIZE // 9) + " */"
    assert seconds(lambda: clean_jsdoc(padded, 600)) < BUDGET
    assert seconds(lambda: clean_jsdoc(many, 600)) < BUDGET
    assert clean_jsdoc("/** See {@link Foo | the foo} and {@linkcode Bar}. */", 600) == (
        "See the foo and Bar."
    )
    assert clean_jsdoc("/** See {@link Foo  the foo}. */", 600) == "See the foo."
