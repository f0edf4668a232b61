"""Markdown for MCP tool results: answers with numbered sources, search results.

Everything a source returns is untrusted text that ends up in a coding agent's context,
so it is cleaned of control characters, kept on one line where it is a field, and
snippets are fenced with a fence longer than any backtick run inside them: a snippet
cannot close its block and pose as the tool's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from codeweaver.presentation.clean import safe_url

SNIPPET_CHARS = 600
TITLE_CHARS = 200
# C0/C1 controls except tab and newline, DEL, and the Unicode bidi overrides that can
# make text read differently from what it is.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")
_BACKTICKS = re.compile(r"`+")
_SPACE = re.compile(r"\s+")


def clean(text: object) -> str:
    """Text without control characters (newlines and tabs kept)."""
    return _CONTROL.sub("", str(text).replace("\r\n", "\n").replace("\r", "\n"))


def one_line(text: object, limit: int = TITLE_CHARS) -> str:
    """A field on one line: cleaned, whitespace collapsed, cut to `limit` characters."""
    flat = _SPACE.sub(" ", clean(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


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


def _licence(item: Mapping[str, Any]) -> str:
    return one_line(item.get("attribution") or "", 300)


def format_results(results: Sequence[Mapping[str, Any]], notes: Iterable[str] = ()) -> str:
    """Search results as numbered Markdown items an agent can quote and cite."""
    lines: list[str] = []
    for n, item in enumerate(results, 1):
        title = one_line(item.get("title") or "(untitled)")
        source = one_line(item.get("source") or "", 60)
        lines.append(f"[{n}] {title}" + (f" ({source})" if source else ""))
        url = safe_url(one_line(item.get("url") or "", 2000))
        lines.append(f"url: {url or '(none)'}")
        if reference := one_line(item.get("reference") or "", 300):
            lines.append(f"reference: {reference}")
        if licence := _licence(item):
            lines.append(f"licence: {licence}")
        lines.append(fence(cut(clean(item.get("snippet") or ""))))
        lines.append("")
    for note in notes:
        lines.append(f"note: {one_line(note, 300)}")
    if not results:
        lines.insert(0, "No results.")
    return "\n".join(lines).rstrip() + "\n"


def format_sources(sources: Sequence[Mapping[str, Any]]) -> str:
    """`[n] title — url (source, licence)`, one a line."""
    lines: list[str] = []
    for item in sources:
        n = item.get("n", len(lines) + 1)
        title = one_line(item.get("title") or "(untitled)")
        url = safe_url(one_line(item.get("url") or "", 2000)) or "(no link)"
        details = ", ".join(
            x for x in (one_line(item.get("source") or "", 60), _licence(item)) if x
        )
        lines.append(f"[{n}] {title} — {url}" + (f" ({details})" if details else ""))
    return "\n".join(lines)


def _searched(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """Source names from the `act` steps that searched one (`name: query`)."""
    names: list[str] = []
    for step in steps:
        data = step.get("data") or {}
        if step.get("kind") == "act" and isinstance(data, Mapping) and "query" in data:
            name = str(step.get("message", "")).split(":", 1)[0].strip()
            if name and " " not in name and name not in names:
                names.append(name)
    return names


def _node(step: Mapping[str, Any]) -> str:
    return str(step.get("node", "")).rsplit("/", 1)[-1]


def summarize_steps(steps: Sequence[Mapping[str, Any]]) -> str:
    """One line: what was searched, how many drafts, whether the answer was checked."""
    parts: list[str] = []
    if any(_node(s) == "check_cache" and str(s.get("message")).startswith("hit") for s in steps):
        return "answered from the cache (an earlier checked answer to the same question)"
    searched = _searched(steps)
    parts.append(f"searched: {', '.join(searched)}" if searched else "searched: nothing")
    drafts = sum(1 for s in steps if _node(s) == "generate_answer" and s.get("data"))
    if drafts:
        parts.append(f"{drafts} draft" + ("s" if drafts > 1 else ""))
    checks = [s.get("data") or {} for s in steps if _node(s) == "check_answer"]
    verdicts = [c.get("passed") for c in checks if isinstance(c, Mapping) and "passed" in c]
    if verdicts:
        parts.append("checked" if verdicts[-1] else "check failed")
    return "; ".join(parts)


def format_answer(done: Mapping[str, Any]) -> str:
    """The `done` event of a run as Markdown: answer, sources, steps, session."""
    answer = clean(done.get("answer") or "").strip() or "(no answer)"
    sources = done.get("sources") or []
    parts = [answer, "", "Sources:"]
    parts.append(format_sources(sources) if sources else "(none)")
    parts += ["", f"Steps: {summarize_steps(done.get('steps') or [])}"]
    parts.append(
        f"Session: {one_line(done.get('session_id', ''), 80)} (pass it as `session_id` to "
        "ask a follow-up in the same conversation)"
    )
    return "\n".join(parts) + "\n"


def step_message(kind: str, data: Mapping[str, Any]) -> str:
    """A progress line for a `queue` or step event."""
    if kind == "queue":
        return f"waiting: place {data.get('position', '?')} in line"
    node = str(data.get("node", "")).rsplit("/", 1)[-1]
    text = one_line(data.get("text") or data.get("message") or "", 160)
    return f"{kind} {node}: {text}" if node else f"{kind}: {text}"
