"""The `[n]` citation markers of an answer, outside its code.

Every layer that shows or checks an answer reads them: the graph renumbers and removes
them, the doors mark which sources are cited. Code keeps its brackets: `rows[2]` is an
index, not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

CITATION = re.compile(r"\[(\d{1,3})\]")
# Code blocks and code spans.
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to every stretch outside code blocks and code spans."""
    parts: list[str] = []
    position = 0
    for match in _CODE.finditer(text):
        parts += [change(text[position : match.start()]), match.group(0)]
        position = match.end()
    return "".join([*parts, change(text[position:])])


def cited_numbers(text: str) -> list[int]:
    """The numbers of the `[n]` markers of `text`, in order, none from inside code."""
    return [int(n) for n in CITATION.findall(_CODE.sub(" ", text))]
