"""Chat text as Gradio's Markdown: shown literally or made inert, citations linked to sources."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from codeweaver.agent.user_text import say
from codeweaver.memory.sessions import SessionInfo
from codeweaver.presentation.clean import one_line
from codeweaver.presentation.sources import SourceView, markdown_item, markdown_text
from codeweaver.words.language import detect_language

TITLE_CHARS = 70
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&$:])")
_CODE = re.compile(r"(```.*?(?:```|$)|`[^`\n]*`)", re.DOTALL)
# `[n]` as a citation (`[1][2]` are two, "합니다[1]" is one): not an index (`a[1]`), an
# escaped bracket, a link (`[1](url)`) or a reference definition (`[1]: url`).
_CITATION = re.compile(r"(?<![A-Za-z0-9_\\])\[(\d{1,3})\](?![(:])")
_FENCE = re.compile(r"(`{3,}|~{3,})[\w+#.-]*")
_FENCED = re.compile(r"(`{3,}|~{3,}).*?(?:\1|$)", re.DOTALL)


def escape_markdown(text: str) -> str:
    """`text` shown literally on one line: every Markdown and HTML character escaped."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def inert_markdown(text: str) -> str:
    """Markdown whose raw HTML shows as text and whose images stay links, outside code."""
    parts = _CODE.split(text)
    return "".join(
        part if i % 2 else part.replace("<", "&lt;").replace("![", "!\\[")
        for i, part in enumerate(parts)
    )


def anchor_id(turn: int, n: int) -> str:
    """The id of source `n` of answer `turn`: unique in a conversation's chat."""
    return f"cw-{turn}-source-{n}"


def views_of(sources: Sequence[Mapping[str, Any]]) -> list[SourceView]:
    """The service's source dicts as views (numbered by position if a number is missing)."""
    return [SourceView.from_dict({**s, "n": s.get("n") or i}) for i, s in enumerate(sources, 1)]


def link_citations(markdown: str, views: Sequence[SourceView], turn: int) -> str:
    """Each `[n]` outside code that names a cited source becomes a link to its entry."""
    cited = {v.n: v for v in views if v.cited}

    def link(match: re.Match[str]) -> str:
        view = cited.get(int(match.group(1)))
        if view is None:
            return match.group(0)
        title = markdown_text(view.title).replace('"', "'")
        return f'[[{view.n}]](#{anchor_id(turn, view.n)} "{title}")'

    parts = _CODE.split(markdown)
    return "".join(part if i % 2 else _CITATION.sub(link, part) for i, part in enumerate(parts))


def sources_markdown(views: Sequence[SourceView], language: str = "en", turn: int = 0) -> str:
    """The cited sources, each with the anchor its citations link to, then one line for
    the others; entries with the same title show their reference to tell them apart."""
    if not views:
        return ""
    titles = Counter(v.title.casefold() for v in views)
    lines = []
    for view in (v for v in views if v.cited):
        twin = titles[view.title.casefold()] > 1 and view.reference
        where = f" ({markdown_text(view.reference)})" if twin else ""
        lines.append(f'- <span id="{anchor_id(turn, view.n)}"></span>{markdown_item(view)}{where}')
    if others := [v for v in views if not v.cited]:
        names = "; ".join(f"[{v.n}] {markdown_text(v.title)}" for v in others)
        lines.append(f"- {say('also_retrieved', language, names=names)}")
    return f"**{say('sources_heading', language)}**\n\n" + "\n".join(lines)


def answer_markdown(
    answer: str, sources: Sequence[Mapping[str, Any]], language: str = "en", turn: int = 0
) -> str:
    """A finished answer, its citations linked to its numbered sources below."""
    views = views_of(sources)
    text = link_citations(inert_markdown(answer), views, turn)
    return "\n\n".join(part for part in (text, sources_markdown(views, language, turn)) if part)


def progress_markdown(lines: Sequence[Mapping[str, Any]]) -> str:
    """The run's progress lines as a numbered Markdown list, each shown literally."""
    return "\n".join(
        f"{i}. {escape_markdown(str(line.get('text', '')))}" for i, line in enumerate(lines, 1)
    )


def session_label(info: SessionInfo, zone: tzinfo = UTC) -> str:
    """`first question, cut · 2026-03-04 14:05`: the question without its fenced code,
    and the last turn's time in `zone`."""
    title = (
        one_line(_FENCED.sub(" ", info.title), TITLE_CHARS)
        or one_line(_FENCE.sub(" ", info.title), TITLE_CHARS)  # a question that is only code
        or "(untitled)"
    )
    when = datetime.fromtimestamp(info.updated, zone).strftime("%Y-%m-%d %H:%M")
    return f"{title} · {when}"


def time_zone(name: object) -> tzinfo:
    """The browser's time zone by its IANA name; UTC for a missing or unknown one."""
    try:
        return ZoneInfo(str(name)) if name else UTC
    except (KeyError, ValueError, OSError):  # unknown names, names that are paths
        return UTC


def history_messages(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, str]], dict[int, int]]:
    """`ChatService.history` messages as Chatbot messages, and the turn of each answer by
    its index in the chat (what a thumbs up or down names)."""
    chat: list[dict[str, str]] = []
    turns: dict[int, int] = {}
    question = ""
    for m in messages:
        if m.get("role") == "user":
            question = str(m.get("content", ""))
            chat.append({"role": "user", "content": inert_markdown(question)})
            continue
        turn = int(m.get("turn") or 0)
        language = detect_language(question)
        content = answer_markdown(str(m.get("content", "")), m.get("sources", []), language, turn)
        if turn:
            turns[len(chat)] = turn
        chat.append({"role": "assistant", "content": content})
    return chat, turns


def status_markdown(line: Mapping[str, Any]) -> str:
    """A progress line shown in the answer's bubble while it is not written yet."""
    return f"_{escape_markdown(str(line.get('text', '')))}_"
