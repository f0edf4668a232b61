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


def _is_search(node: str) -> bool:
    return node in SEARCH_NODES or node.startswith("search_")


def _source_of(message: str) -> str:
    """The source a search step names: `installed_docs: query`, `3 results from web`."""
    if " results from " in message:
        return message.rsplit(" results from ", 1)[1].strip()
    return message.split(":", 1)[0].split(" failed", 1)[0].strip()


@dataclass
class Progress:
    """Feed it the run's steps in order; it returns the lines each one adds."""

    language: str = "en"
    said: int = 0
    _started: bool = False
    _announced: list[str] = field(default_factory=list)
    _pending: list[str] = field(default_factory=list)
    _found: dict[str, int] = field(default_factory=dict)
    _failed: list[str] = field(default_factory=list)
    _not_ready: list[str] = field(default_factory=list)
    _off: set[str] = field(default_factory=set)
    _outcomes: bool = False
    _reported: bool = False  # a line said what the search found

    def _say(self, key: str, **fields: Any) -> str:
        return say(key, self.language, **fields)

    def _labels(self, names: Iterable[str]) -> str:
        return ", ".join(source_label(n, self.language) for n in names)

    def _line(self, phase: str, text: str) -> list[ProgressLine]:
        if self.said >= MAX_LINES or (self.said >= MAX_LINES - 3 and phase not in _ALWAYS):
            return []  # the last lines are kept for the answer's own phases
        self.said += 1
        return [ProgressLine(phase, text)]

    def queue(self, position: object) -> ProgressLine:
        """The line for a place in line (not counted against the budget)."""
        return ProgressLine("queue", self._say("progress_waiting", position=position))

    def feed(self, item: Mapping[str, Any]) -> list[ProgressLine]:
        node, kind = _node(item), str(item.get("kind", ""))
        message = str(item.get("message", ""))
        data = item.get("data") or {}
        lines: list[ProgressLine] = []
        if not self._started:
            self._started = True
            lines += self._line(_START, self._say("progress_understanding"))
        if _is_search(node):
            return lines + self._search(kind, message, data)
        lines += self._announce()
        if node != "collect_results":
            lines += self._flush()
        return lines + self._other(node, kind, message, data)

    def finish(self) -> list[ProgressLine]:
        """Lines still owed when the run ends (a search whose results nothing read)."""
        return self._announce() + self._flush()

    def _search(self, kind: str, message: str, data: Mapping[str, Any]) -> list[ProgressLine]:
        source = _source_of(message)
        if kind == "act" and "query" in data:
            if source not in self._pending and source not in self._announced:
                self._pending.append(source)
            return []
        lines = self._announce()  # an outcome: every search of this round has started
        if kind == "error":
            self._outcomes = True
            if source not in self._failed:
                self._failed.append(source)
        elif message.startswith("skipped:"):
            name = data.get("not_ready")
            if isinstance(name, str):
                self._outcomes = True
                self._not_ready.append(name)
            elif not message.startswith(_NOT_APPLICABLE):
                self._off.add(message.removeprefix("skipped:").split(":", 1)[0].strip())
        elif "answered" in data or "results" in data:  # the pipeline's, the librarian's
            self._outcomes = True
            count = int(message.split(" ", 1)[0]) if message[:1].isdigit() else 0
            self._found[source] = self._found.get(source, 0) + count
        return lines

    def _announce(self) -> list[ProgressLine]:
        if not self._pending:
            return []
        key = "progress_searching_more" if self._announced else "progress_searching"
        names, self._pending = self._pending, []
        self._announced += names
        return self._line("search", self._say(key, names=self._labels(names)))

    def _flush(self) -> list[ProgressLine]:
        """The line for what this round of searches found, once it is over."""
        if not self._outcomes:
            return []
        parts = [
            f"{source_label(name, self.language)} {count}"
            for name, count in self._found.items()
            if count
        ]
        total = sum(self._found.values())
        text = (
            self._say("progress_found", count=total, parts=", ".join(parts))
            if total
            else self._say("progress_found_none")
        )
        if failed := [n for n in self._failed if n not in self._found]:
            text += self._say("progress_failed", names=self._labels(failed))
        if self._not_ready:
            text += self._say("progress_not_ready", names=self._labels(self._not_ready))
        if self._off:
            text += self._say("progress_off", count=len(self._off))
        self._found, self._failed, self._not_ready, self._outcomes = {}, [], [], False
        self._announced, self._reported = [], True
        return self._line("found", text)

    def _other(
        self, node: str, kind: str, message: str, data: Mapping[str, Any]
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
        if node == "filter_and_score" and not self._reported and self._off:
            # Nothing was searched at all: say so, and why, before the writing line.
            self._reported = True
            off = self._say("progress_off", count=len(self._off))
            text = self._say("progress_found_none") + off
            return self._line("found", text) + self._other(node, kind, message, data)
        if node == "filter_and_score" and message.startswith("kept"):
            kept, _, total = message.removeprefix("kept ").partition(" of ")
            if kept.strip() in ("", "0"):
                return self._line("write", self._say("progress_writing"))
            return self._line("write", self._say("progress_writing_from", kept=kept, total=total))
        if node == "librarian_agent" and data.get("tool") == "answer":
            return self._line("write", self._say("progress_writing"))
        if kind == "think" and data.get("retry"):
            if message.startswith("rewriting the code without "):
                names = one_line(message.removeprefix("rewriting the code without "), REASON_CHARS)
                return self._line("write", self._say("progress_rewriting_code", names=names))
            why = one_line(message.partition(": ")[2] or message, REASON_CHARS)
            return self._line("write", self._say("progress_rewriting", why=why))
        if "passed" in data and "claims" in data:
            return self._line("check", self._checked(data))
        if "checked" in data and "found" in data:
            found = int(data.get("found") or 0)
            key = "progress_code_missing" if found else "progress_code_ok"
            return self._line("code", self._say(key, uses=data.get("checked"), found=found))
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
