"""Markdown for MCP tool results: answers with numbered sources, search results.

Everything a source returns is untrusted text that ends up in a coding agent's context,
so it is cleaned by the rule every door shares (`presentation.clean`), kept on one line
where it is a field, and snippets are fenced with a fence longer than any backtick run
inside them: a snippet cannot close its block and pose as the tool's own words. An
answer's sources and steps come from the shared view (`presentation`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from codeweaver.agent.user_text import say
from codeweaver.presentation.clean import clean
from codeweaver.presentation.clean import one_line as shared_one_line
from codeweaver.presentation.sources import SourceView, source_views

SNIPPET_CHARS = 600
TITLE_CHARS = 200
_BACKTICKS = re.compile(r"`+")


def one_line(text: object, limit: int = TITLE_CHARS) -> str:
    """A field on one line: cleaned, whitespace collapsed, cut to `limit` characters."""
    return shared_one_line(text, limit)


def cut(text: str, limit: int = SNIPPET_CHARS) -> str:
    """`text` cut to about `limit` characters, at a word boundary when one is near."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit * 0.8 else head).rstrip() + " …"


def fence(text: str, info: str = "text") -> str:
    """`text` in a code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text}\n{marks}"


def snippet_text(snippet: object) -> str:
    """A result's snippet as quoted: cleaned and cut to about `SNIPPET_CHARS`."""
    return cut(clean(snippet or ""))


def result_score(item: Mapping[str, Any]) -> float | None:
    """A result's score as a number in [0, 1], or None when it has none (it is a source's
    data: a boolean or a string is no score, a stray value is clamped into the range)."""
    value = item.get("score")
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return min(max(float(value), 0.0), 1.0)


def format_results(
    results: Sequence[Mapping[str, Any]],
    notes: Iterable[str] = (),
    *,
    header: Iterable[str] = (),
    footer: Iterable[str] = (),
) -> str:
    """Search results as numbered Markdown items an agent can quote and cite, each with
    its score; `header` lines come first (how fresh the index is), `footer` lines after
    the notes (what was left out, what to try). Those are the server's own words."""
    lines: list[str] = [one_line(line, 400) for line in header]
    if lines:
        lines.append("")
    if not results:
        lines.append("No results.")
    # The same views as the structured content's and an answer's sources.
    for view, item in zip(source_views("", results), results, strict=True):
        lines.append(f"[{view.n}] {view.title}" + (f" ({view.source})" if view.source else ""))
        lines.append(f"url: {view.url or '(none)'}")
        if (score := result_score(item)) is not None:
            lines.append(f"score: {score:.3f}")
        if view.reference:
            lines.append(f"reference: {view.reference}")
        if view.licence:
            lines.append(f"licence: {view.licence}")
        lines.append(fence(snippet_text(item.get("snippet"))))
        lines.append("")
    for note in notes:
        lines.append(f"note: {one_line(note, 300)}")
    lines.extend(one_line(line, 400) for line in footer)
    return "\n".join(lines).rstrip() + "\n"


def format_sources(sources: Sequence[Mapping[str, Any]], language: str = "en") -> str:
    """`[n] title — url (source, licence)`, one a line for the cited sources, then one
    line naming the others."""
    views = [SourceView.from_dict({"n": n, **item}) for n, item in enumerate(sources, 1)]
    lines: list[str] = []
    for view in views:
        if view.cited:
            details = ", ".join(x for x in (view.label, view.attribution) if x)
            url = view.url or "(no link)"
            lines.append(f"[{view.n}] {view.title} — {url}" + (f" ({details})" if details else ""))
    if others := [f"[{v.n}] {v.title}" for v in views if not v.cited]:
        lines.append(say("also_retrieved", language, names="; ".join(others)))
    return "\n".join(lines)


def answer_text(done: Mapping[str, Any]) -> str:
    """The answer of a `done` event, cleaned."""
    return clean(done.get("answer") or "").strip() or "(no answer)"


def format_answer(done: Mapping[str, Any]) -> str:
    """The `done` event of a run as Markdown: answer, sources, steps, session."""
    answer = answer_text(done)
    sources = done.get("sources") or []
    parts = [answer, "", "Sources:"]
    language = str(done.get("language") or "en")
    parts.append(format_sources(sources, language) if sources else "(none)")
    lines = [one_line(line.get("text", ""), 300) for line in done.get("progress") or []]
    parts += ["", "Steps:", *(f"- {line}" for line in lines or ["(none)"])]
    parts += [
        "",
        f"Session: {one_line(done.get('session_id', ''), 80)} (pass it as `session_id` to "
        "ask a follow-up in the same conversation)",
    ]
    return "\n".join(parts) + "\n"


def progress_message(kind: str, data: Mapping[str, Any]) -> str:
    """The progress notification for a place in line or a step in words ("" for none)."""
    if kind == "queue":
        return say("progress_waiting", "en", position=data.get("position", "?"))
    if kind == "progress":
        return one_line(data.get("text") or "", 300)
    return ""
