"""The code check applied to an answer: each Python, JavaScript or TypeScript block of its
Markdown is checked, findings get the facts a rewrite needs (the nearest existing names,
the keywords the signature takes), and those left in the final answer become a note under
their block. A line the user's question already holds is theirs: never flagged.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.findings import CodeReport, Finding, check_python
from codeweaver.codecheck.hints import class_mentions, removal_message
from codeweaver.codecheck.js import check_js
from codeweaver.codecheck.npm_api import NpmApi

# A fenced block: its info string (language) and body.
FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.DOTALL | re.MULTILINE)  # fmt: skip
PYTHON_INFO = frozenset({"", "python", "py", "python3", "pycon", "ipython"})
JS_INFO = frozenset({"js", "javascript", "jsx", "mjs", "cjs", "node", "nodejs", "ts",
                     "typescript", "tsx", "mts", "cts"})  # fmt: skip
PYTHON, JS = "python", "javascript"
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
    # What the library says about it (`hints`): its removal message, or docstring lines
    # naming the class and the missing method.
    says: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**self.finding.to_dict(), "block": self.block, "close": list(self.close)}

    def fact(self) -> str:
        """The finding, its nearest names and what the library says, in English (for the
        model's rewrite)."""
        names = ", ".join(f"`{name}`" for name in self.close)
        hint = f"; exists: {names}" if names else ""
        says = "".join(f"; the installed library says: {line}" for line in self.says)
        return f"{self.finding.message}{hint}{says}"


@dataclass(frozen=True)
class AnswerCheck:
    findings: tuple[BlockFinding, ...]
    blocks: int  # code blocks checked
    uses: int  # API uses judged
    apis: tuple[str, ...] = ()  # the installed APIs the code uses that exist, in order

    def summary(self) -> str:
        uses = f"{self.uses} API use{'' if self.uses == 1 else 's'}"
        blocks = f"{self.blocks} code block{'' if self.blocks == 1 else 's'}"
        return (
            f"code check: {uses} in {blocks} checked against the installed versions; "
            f"{len(self.findings)} missing or misused"
        )


def code_blocks(answer: str) -> list[tuple[int, str, re.Match[str]]]:
    """(1-based block number among all fenced blocks, language, match) of the blocks the
    check reads: Python (also an untagged block) and JavaScript/TypeScript."""
    found = []
    for number, match in enumerate(FENCE.finditer(answer), 1):
        info = match.group("info").strip().lower().split(" ")[0]
        if info in PYTHON_INFO:
            found.append((number, PYTHON, match))
        elif info in JS_INFO:
            found.append((number, JS, match))
    return found


def check_answer_code(
    answer: str, api: ApiIndex | None, npm: NpmApi | None = None, question: str = ""
) -> AnswerCheck:
    """Check every code block of `answer` the given indexes can judge (blocks that do not
    parse are skipped); a finding on a line `question` holds is the user's, not reported."""
    findings: list[BlockFinding] = []
    blocks = uses = 0
    apis: dict[str, None] = {}
    theirs = {line.strip() for line in question.splitlines() if line.strip()}
    for number, language, match in code_blocks(answer):
        body = match.group("body")
        report: CodeReport
        if language == PYTHON and api is not None:
            report = check_python(body, api)
        elif language == JS and npm is not None:
            report = check_js(body, npm)
        else:
            continue
        if not report.parsed:
            continue
        blocks += 1
        uses += report.checked
        apis.update(dict.fromkeys(report.apis))
        lines = body.splitlines()
        for finding in report.findings:
            written = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
            if written and written in theirs:
                continue
            if language == PYTHON and api is not None:
                item = BlockFinding(number, finding, _close(finding, api), _says(finding, api))
            else:
                item = BlockFinding(number, finding, _js_close(finding, npm))
            findings.append(item)
    return AnswerCheck(tuple(findings), blocks, uses, tuple(apis))


def _close(finding: Finding, api: ApiIndex) -> tuple[str, ...]:
    """The names nearest to the missing one (or keyword) that do exist."""
    if finding.kind == "syntax":
        return ()
    if finding.kind == "keyword":
        names = sorted(api.keywords(api.get(finding.api)) or ())
        wanted = finding.keyword
    else:
        owner, _, wanted = finding.api.rpartition(".")
        names = api.member_names(owner)
    close = difflib.get_close_matches(wanted, names, MAX_SUGGESTIONS, CLOSE_ENOUGH)
    return tuple(close)


def _says(finding: Finding, api: ApiIndex) -> tuple[str, ...]:
    """What the library says about a missing name (nothing about a keyword: the nearest
    ones it takes are in `close`)."""
    if finding.kind != "missing":
        return ()
    owner, _, name = finding.api.rpartition(".")
    if api.is_class(owner):
        return tuple(class_mentions(api, owner, name))
    message = removal_message(api, owner, name)
    return (message,) if message else ()


def _js_close(finding: Finding, npm: NpmApi | None) -> tuple[str, ...]:
    """The exports of the module nearest to the missing name."""
    module, _, wanted = finding.api.rpartition(".")
    exports = npm.exports(module) if npm is not None else None
    if exports is None:
        return ()
    names = sorted(exports.names - {"default"})
    return tuple(difflib.get_close_matches(wanted, names, MAX_SUGGESTIONS, CLOSE_ENOUGH))


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
    """The code check of one project's answers; its indexes are made on first use
    (reading a large package takes seconds) and kept. `make_npm` gives the project's npm
    modules, or None when it has no `node_modules`."""

    def __init__(
        self,
        make_api: Callable[[], ApiIndex],
        make_npm: Callable[[], NpmApi | None] | None = None,
    ) -> None:
        self._make_api = make_api
        self._make_npm = make_npm
        self._api: ApiIndex | None = None
        self._npm: NpmApi | None = None
        self._npm_made = False
        self._lock = threading.Lock()

    def api(self) -> ApiIndex:
        with self._lock:
            if self._api is None:
                self._api = self._make_api()
            return self._api

    def npm(self) -> NpmApi | None:
        with self._lock:
            if not self._npm_made and self._make_npm is not None:
                self._npm = self._make_npm()
            self._npm_made = True
            return self._npm

    def check(self, answer: str, question: str = "") -> AnswerCheck:
        """Check `answer`'s code blocks (blocking: run it in a thread); lines `question`
        holds are the user's own and never flagged."""
        languages = {language for _, language, _ in code_blocks(answer)}
        if not languages:
            return AnswerCheck((), 0, 0)
        api = self.api() if PYTHON in languages else None
        npm = self.npm() if JS in languages else None
        return check_answer_code(answer, api, npm, question)
