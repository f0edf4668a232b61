"""A run's steps as a few lines people read, in the question's language.

A run takes some thirty steps (every search node reports, skipped or not); a person
wants to know what is happening now and what was found. `Progress` turns the steps, in
the order they stream, into at most a dozen lines: understanding the question, what is
being searched, what was found (and how many sources are off), writing, and what the
checks found. Skips are counted, never listed; internal node names never appear (they
stay in the steps themselves, which `--json` and the API keep). Lines are final once
said, so a door that can only append (a log, `/v1` reasoning, MCP progress) shows them
as they come, and a door with a status line shows the last one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeweaver.agent.search_nodes import SEARCH_NODES
from codeweaver.agent.user_text import say, source_label
from codeweaver.presentation.clean import one_line

MAX_LINES = 12
REASON_CHARS = 120
# Steps that tell what the question is; the first step of a run says it is being read.
_START = "understand"
# Skips that say a node does not apply to this question, not that its source is off.
_NOT_APPLICABLE = ("skipped: not used for", "skipped: fallback")
# Phases said even past the line budget: what the user needs to trust the answer.
_ALWAYS = frozenset({"write", "check", "code", "cache", "decline"})


@dataclass(frozen=True)
class ProgressLine:
    """One line: `phase` says what kind (`search`, `found`, `check`, …), `text` says it."""

    phase: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"phase": self.phase, "text": self.text}


def _node(item: Mapping[str, Any]) -> str:
    return str(item.get("node", "")).rsplit("/", 1)[-1]


def _part(item: Mapping[str, Any]) -> str:
    """Which question of a two-question message a step is for ("1", "2"), else ""."""
    node = str(item.get("node", ""))
    head = node.split("/", 1)[0] if "/" in node else ""
    return head[1:] if head[:1] == "Q" and head[1:].isdigit() else ""


def _is_search(node: str) -> bool:
    return node in SEARCH_NODES or node.startswith("search_")


def _source_of(message: str) -> str:
    """The source a search step names: `installed_docs: query`, `3 results from web`."""
    if " results from " in message:
        return message.rsplit(" results from ", 1)[1].strip()
    return message.split(":", 1)[0].split(" failed", 1)[0].strip()


@dataclass
class _Round:
    """One question's searches since what they found was last said."""

    announced: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    found: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    not_ready: list[str] = field(default_factory=list)
    outcomes: bool = False
    reported: bool = False  # a line said what the search found


@dataclass
class Progress:
    """Feed it the run's steps in order; it returns the lines each one adds.

    The two questions of a two-question message are searched side by side: each keeps
    its own round, and its lines say which question they are about.
    """

    language: str = "en"
    said: int = 0
    _started: bool = False
    _rounds: dict[str, _Round] = field(default_factory=dict)
    _off: set[str] = field(default_factory=set)
    _off_said: bool = False
    _phase: str = ""  # the phase of the last line said

    def _say(self, key: str, **fields: Any) -> str:
        return say(key, self.language, **fields)

    def _labels(self, names: Iterable[str]) -> str:
        return ", ".join(source_label(n, self.language) for n in names)

    def _line(self, phase: str, text: str, part: str = "") -> list[ProgressLine]:
        if self.said >= MAX_LINES or (self.said >= MAX_LINES - 3 and phase not in _ALWAYS):
            return []  # the last lines are kept for the answer's own phases
        self.said += 1
        self._phase = phase
        return [ProgressLine(phase, f"({part}) {text}" if part else text)]

    def started(self) -> list[ProgressLine]:
        """The line for searches that have started and not yet been said: for a door to
        call when a moment passes without a step (searches start together, within
        milliseconds; the first of them to end may take seconds)."""
        return [line for part in list(self._rounds) for line in self._announce(part)]

    def still_writing(self, words: int) -> list[ProgressLine]:
        """A line for a long wait while the answer is written ([] at any other time): how
        many words the draft has so far. It never takes the lines kept for the checks."""
        if self._phase != "write":
            return []
        key = "progress_still_writing" if words else "progress_still_reading"
        lines = self._line("writing", self._say(key, words=words))
        self._phase = "write"  # the next wait is still a wait while writing
        return lines

    def queue(self, position: object) -> ProgressLine:
        """The line for a place in line (not counted against the budget)."""
        return ProgressLine("queue", self._say("progress_waiting", position=position))

    def feed(self, item: Mapping[str, Any]) -> list[ProgressLine]:
        node, kind, part = _node(item), str(item.get("kind", "")), _part(item)
        message = str(item.get("message", ""))
        data = item.get("data") or {}
        lines: list[ProgressLine] = []
        if not self._started:
            self._started = True
            lines += self._line(_START, self._say("progress_understanding"))
        if _is_search(node):
            return lines + self._search(part, kind, message, data)
        lines += self._announce(part)
        if node != "collect_results":
            lines += self._flush(part)
        return lines + self._other(part, node, kind, message, data)

    def finish(self) -> list[ProgressLine]:
        """Lines still owed when the run ends (a search whose results nothing read)."""
        return [line for part in self._rounds for line in self._announce(part) + self._flush(part)]

    def _round(self, part: str) -> _Round:
        return self._rounds.setdefault(part, _Round())

    def _search(
        self, part: str, kind: str, message: str, data: Mapping[str, Any]
    ) -> list[ProgressLine]:
        source, now = _source_of(message), self._round(part)
        if kind == "act" and "query" in data:
            if source not in now.pending and source not in now.announced:
                now.pending.append(source)
            return []
        lines = self._announce(part)  # an outcome: every search of this round has started
        if kind == "error":
            now.outcomes = True
            if source not in now.failed:
                now.failed.append(source)
        elif message.startswith("skipped:"):
            name = data.get("not_ready")
            if isinstance(name, str):
                now.outcomes = True
                now.not_ready.append(name)
            elif not message.startswith(_NOT_APPLICABLE):
                self._off.add(message.removeprefix("skipped:").split(":", 1)[0].strip())
        elif "answered" in data or "results" in data:  # the pipeline's, the librarian's
            now.outcomes = True
            count = int(message.split(" ", 1)[0]) if message[:1].isdigit() else 0
            now.found[source] = now.found.get(source, 0) + count
        return lines

    def _announce(self, part: str) -> list[ProgressLine]:
        now = self._round(part)
        if not now.pending:
            return []
        key = "progress_searching_more" if now.announced else "progress_searching"
        names, now.pending = now.pending, []
        now.announced += names
        return self._line("search", self._say(key, names=self._labels(names)), part)

    def _off_text(self) -> str:
        """How many sources are off, said once per run."""
        if not self._off or self._off_said:
            return ""
        self._off_said = True
        return self._say("progress_off", count=len(self._off))

    def _flush(self, part: str) -> list[ProgressLine]:
        """The line for what this round of searches found, once it is over."""
        now = self._round(part)
        if not now.outcomes:
            return []
        parts = [
            f"{source_label(name, self.language)} {count}"
            for name, count in now.found.items()
            if count
        ]
        total = sum(now.found.values())
        text = (
            self._say("progress_found", count=total, parts=", ".join(parts))
            if total
            else self._say("progress_found_none")
        )
        if failed := [n for n in now.failed if n not in now.found]:
            text += self._say("progress_failed", names=self._labels(failed))
        if now.not_ready:
            text += self._say("progress_not_ready", names=self._labels(now.not_ready))
        text += self._off_text()
        self._rounds[part] = _Round(reported=True)
        return self._line("found", text, part)

    def _other(
        self, part: str, node: str, kind: str, message: str, data: Mapping[str, Any]
    ) -> list[ProgressLine]:
        if kind == "error":
            return []  # internal fallbacks: the answer says what matters to the user
        if node == "route_query" and message.startswith("simple"):
            return self._line("direct", self._say("progress_direct"))
        if node == "create_plan" and message.startswith("multiple_questions"):
            return self._line(_START, self._say("progress_two_questions"))
        if node == "handle_too_many_questions":
            return self._line("decline", self._say("progress_too_many"))
        if node == "check_cache" and message.startswith("hit"):
            return self._line("cache", self._say("progress_cache_hit"))
        if node == "analyze_question" and message.startswith("clarification"):
            return self._line("write", self._say("progress_from_history"))
        if node == "refine_search" and kind == "act":
            return self._line("search", self._say("progress_refining"))
        if node == "filter_and_score" and not self._round(part).reported and self._off:
            # Nothing was searched at all: say so, and why, before the writing line.
            self._round(part).reported = True
            text = self._say("progress_found_none") + self._off_text()
            return self._line("found", text, part) + self._other(part, node, kind, message, data)
        if kind == "act" and "paragraphs" in data:
            done, total = data.get("paragraph"), data["paragraphs"]
            text = (
                self._say("progress_translating_part", done=done, total=total)
                if done
                else self._say("progress_translating")
            )
            return self._line("write", text, part)
        if node == "generate_answer" and kind == "act" and data.get("attempt") == 1:
            count = int(data.get("sources") or 0)
            text = (
                self._say("progress_writing_from", count=count)
                if count
                else self._say("progress_writing")
            )
            return self._line("write", text, part)
        if node == "librarian_agent" and data.get("tool") == "answer":
            return self._line("write", self._say("progress_writing"))
        if kind == "think" and data.get("retry"):
            if message.startswith("rewriting the code without "):
                names = one_line(message.removeprefix("rewriting the code without "), REASON_CHARS)
                text = self._say("progress_rewriting_code", names=names)
                return self._line("write", text, part)
            why = one_line(message.partition(": ")[2] or message, REASON_CHARS)
            return self._line("write", self._say("progress_rewriting", why=why), part)
        if "passed" in data and "claims" in data:
            return self._line("check", self._checked(data), part)
        if "checked" in data and "found" in data:
            found = int(data.get("found") or 0)
            key = "progress_code_missing" if found else "progress_code_ok"
            text = self._say(key, uses=data.get("checked"), found=found)
            return self._line("code", text, part)
        return []

    def _checked(self, data: Mapping[str, Any]) -> str:
        claims = int(data.get("claims") or 0)
        unsupported = len(data.get("unsupported") or [])
        if not claims:
            return self._say("progress_checked_none")
        text = self._say("progress_checked", supported=claims - unsupported, claims=claims)
        if removed := int(data.get("citations_removed") or 0):
            text += self._say("progress_citations_removed", count=removed)
        if contradictions := int(data.get("contradictions") or 0):
            text += self._say("progress_contradictions", count=contradictions)
        return text


def _as_streamed(steps: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """A finished run's steps in the order they streamed: a node's steps are kept
    together in its state, but live every search of a round starts before any ends."""
    ordered: list[Mapping[str, Any]] = []
    block: list[Mapping[str, Any]] = []
    for item in [*steps, {}]:
        if item and _is_search(_node(item)):
            block.append(item)
            continue
        starts = [s for s in block if s.get("kind") == "act"]
        ordered += starts + [s for s in block if s.get("kind") != "act"]
        block = []
        if item:
            ordered.append(item)
    return ordered


def progress_lines(steps: Iterable[Mapping[str, Any]], language: str = "en") -> list[ProgressLine]:
    """Every line of a finished run's steps."""
    progress = Progress(language)
    lines = [line for item in _as_streamed(steps) for line in progress.feed(item)]
    return lines + progress.finish()
