"""Cite the source whose code an answer copies.

An answer built on a Stack Overflow answer often reproduces its code line for line yet
cites nothing, or cites it on a sentence of its own words that the grounding check then
rightly uncites ("This function creates an iterator that repeats its input
indefinitely [1]"). Copied code is the plainest evidence of use: the source is cited on
the sentence that introduces the code, and that citation stands as "this code is the
source's", not as a claim the source must state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeweaver.agent.citations import CITATION, prose_blocks
from codeweaver.agent.state import SearchResult

_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
# A line this short ("}", "return x", "n = 4") is shared by chance, not copied.
MIN_LINE_CHARS = 12
# Lines a block must share with a source to count as copied from it.
MIN_COPIED_LINES = 2


def _code_lines(text: str) -> set[str]:
    """The significant lines of the fenced code in `text`, whitespace-normalised."""
    lines: set[str] = set()
    for block in _FENCED.findall(text):
        for line in block.splitlines():
            normal = " ".join(line.split())
            if len(normal) >= MIN_LINE_CHARS:
                lines.add(normal)
    return lines


def copied_lines(code: str, source: SearchResult) -> int:
    """How many significant code lines of `code` (fenced) stand in the source's code."""
    return len(_code_lines(code) & _code_lines(source.get("snippet", "")))


def copies_code(code: str, source: SearchResult) -> bool:
    """Whether `code` (an answer, or one fenced block of it) copies the source's code."""
    wanted = _code_lines(code)
    shared = len(wanted & _code_lines(source.get("snippet", "")))
    # A one-line block counts when its line is the source's; longer ones need two lines.
    return shared >= min(MIN_COPIED_LINES, len(wanted)) and shared > 0


def _cite(paragraph: str, n: int) -> str:
    stripped = paragraph.rstrip()
    if stripped and stripped[-1] in ".!?:":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def cite_copied_code(answer: str, sources: Sequence[SearchResult]) -> tuple[str, list[int]]:
    """The answer with `[n]` on the prose that introduces each code block copied from
    source n (when that prose does not cite n yet), and the numbers newly cited."""
    blocks = answer.split("\n\n")
    prose = set(prose_blocks(blocks))
    added: list[int] = []
    for i, block in enumerate(blocks):
        if i in prose or not block.lstrip().startswith("```"):
            continue
        rest = "\n\n".join(blocks[i:])  # the block may span blank lines
        start = rest.find("```")
        end = rest.find("```", start + 3)
        code = rest if end < 0 else rest[: end + 3]
        copied = [n for n, s in enumerate(sources, 1) if copies_code(code, s)]
        if not copied:
            continue
        n = max(copied, key=lambda k: copied_lines(code, sources[k - 1]))
        intro = max((j for j in prose if j < i), default=min(prose, default=None))
        if n in added or intro is None or str(n) in CITATION.findall(blocks[intro]):
            continue  # once per source: its output block need not cite it again
        blocks[intro] = _cite(blocks[intro], n)
        added.append(n)
    return "\n\n".join(blocks), added
