"""The code check applied to an answer: each Python block of its Markdown is checked,
findings get the facts a rewrite needs (the nearest existing names, the keywords the
signature takes), and those left in the final answer become a note under their block.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.findings import Finding, check_python

# A fenced block: its info string (language) and body.
FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.DOTALL | re.MULTILINE)  # fmt: skip
PYTHON_INFO = frozenset({"", "python", "py", "python3", "pycon", "ipython"})
MAX_SUGGESTIONS = 3
# Below this a "nearest" name is noise (`pipe` for `append`).
CLOSE_ENOUGH = 0.75


@dataclass(frozen=True)
class BlockFinding:
    """A finding in the answer's `block`-th fenced block (1-based)."""

    block: int
    finding: Finding
    # The nearest names the owner has (a missing name) or keywords it takes (a keyword).
    close: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**self.finding.to_dict(), "block": self.block, "close": list(self.close)}

    def fact(self) -> str:
        """The finding and its nearest names, in English (for the model's rewrite)."""
        names = ", ".join(f"`{name}`" for name in self.close)
        hint = f"; exists: {names}" if names else ""
        return f"{self.finding.message}{hint}"


@dataclass(frozen=True)
class AnswerCheck:
    findings: tuple[BlockFinding, ...]
    blocks: int  # Python blocks checked
    uses: int  # API uses judged

    def summary(self) -> str:
        found = len(self.findings)
        return (
            f"code check: {self.uses} API uses in {self.blocks} Python blocks checked "
            f"against the installed versions; {found} missing or misused"
        )


def python_blocks(answer: str) -> list[tuple[int, re.Match[str]]]:
    """(1-based block number among all fenced blocks, match) of the Python ones."""
    found = []
    for number, match in enumerate(FENCE.finditer(answer), 1):
        info = match.group("info").strip().lower().split(" ")[0]
        if info in PYTHON_INFO:
            found.append((number, match))
    return found


def check_answer_code(answer: str, api: ApiIndex) -> AnswerCheck:
    """Check every Python block of `answer` (blocks that do not parse are skipped)."""
    findings: list[BlockFinding] = []
    blocks = uses = 0
    for number, match in python_blocks(answer):
        report = check_python(match.group("body"), api)
        if not report.parsed:
            continue
        blocks += 1
        uses += report.checked
        findings += [BlockFinding(number, f, _close(f, api)) for f in report.findings]
    return AnswerCheck(tuple(findings), blocks, uses)


def _close(finding: Finding, api: ApiIndex) -> tuple[str, ...]:
    """The names nearest to the missing one (or keyword) that do exist."""
    if finding.kind == "keyword":
        names = sorted(api.keywords(api.get(finding.api)) or ())
        wanted = finding.keyword
    else:
        owner, _, wanted = finding.api.rpartition(".")
        names = api.member_names(owner)
    close = difflib.get_close_matches(wanted, names, MAX_SUGGESTIONS, CLOSE_ENOUGH)
    return tuple(close)


def with_notes(answer: str, check: AnswerCheck, note: Callable[[BlockFinding], str]) -> str:
    """`answer` with a note under each block that still has findings."""
    by_block: dict[int, list[BlockFinding]] = {}
    for item in check.findings:
        by_block.setdefault(item.block, []).append(item)
    if not by_block:
        return answer
    out: list[str] = []
    last = 0
    for number, match in enumerate(FENCE.finditer(answer), 1):
        out.append(answer[last : match.end()])
        last = match.end()
        if number in by_block:
            out.append("\n\n" + "\n".join(f"> ⚠ {note(item)}" for item in by_block[number]))
    out.append(answer[last:])
    return "".join(out)


class CodeChecker:
    """The code check of one environment's answers; its API index is made on first use
    (reading a large package takes seconds) and kept."""

    def __init__(self, make_api: Callable[[], ApiIndex]) -> None:
        self._make_api = make_api
        self._api: ApiIndex | None = None
        self._lock = threading.Lock()

    def api(self) -> ApiIndex:
        with self._lock:
            if self._api is None:
                self._api = self._make_api()
            return self._api

    def check(self, answer: str) -> AnswerCheck:
        """Check `answer`'s Python blocks (blocking: run it in a thread)."""
        if not python_blocks(answer):
            return AnswerCheck((), 0, 0)
        return check_answer_code(answer, self.api())
