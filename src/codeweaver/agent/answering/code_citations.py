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

from codeweaver.agent.state import SearchResult
from codeweaver.words.markers import CITATION

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


def _cite(line: str, n: int) -> str:
    stripped = line.rstrip()
    if stripped and stripped[-1] in ".!?:":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def _intro_line(answer: str, fence_start: int) -> tuple[int, int] | None:
    """(start, end) of the prose line right before the fence at `fence_start`, if any."""
    before = answer[:fence_start].rstrip()
    start = before.rfind("\n") + 1
    line = before[start:]
    if not line.strip() or line.lstrip().startswith("```"):
        return None  # the answer opens with code, or two blocks follow each other
    return start, len(before)


def introduces_code(answer: str, claim: str, source: SearchResult) -> bool:
    """Whether `claim` (as written) ends the line right before a code block that copies
    the source's code."""
    at = answer.find(claim)
    if at < 0:
        return False
    rest = answer[at + len(claim) :]
    line_end = re.match(r"[ \t]*\n\s*", rest)  # the claim ends its line; code follows
    block = _CODE_BLOCK.match(rest, line_end.end()) if line_end else None
    return block is not None and copies_code(block.group(0), source)


_CODE_BLOCK = re.compile(r"[ \t]*```[^\n]*\n.*?^[ \t]*```", re.DOTALL | re.MULTILINE)


def cite_copied_code(answer: str, sources: Sequence[SearchResult]) -> tuple[str, list[int]]:
    """The answer with `[n]` on the prose line that introduces each code block copied
    from source n (once per source, unless that line cites n already), and the numbers
    newly cited."""
    placed: list[tuple[int, int]] = []  # (end of the introducing line, source number)
    for block in _CODE_BLOCK.finditer(answer):
        code = block.group(0)
        copied = [n for n, s in enumerate(sources, 1) if copies_code(code, s)]
        if not copied:
            continue
        n = max(copied, key=lambda k: copied_lines(code, sources[k - 1]))
        line = _intro_line(answer, block.start())
        if n in {m for _, m in placed} or line is None:
            continue  # once per source: its output block need not cite it again
        if str(n) in CITATION.findall(answer[line[0] : line[1]]):
            continue
        placed.append((line[1], n))
    cited = answer
    for end, n in reversed(placed):
        start = cited.rfind("\n", 0, end) + 1
        cited = cited[:start] + _cite(cited[start:end], n) + cited[end:]
    return cited, [n for _, n in placed]
