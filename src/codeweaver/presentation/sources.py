"""The numbered sources of an answer, as every door shows them.

The answer's citations are renumbered so the cited sources come first (see
`agent.answering.citations.cited_first`); the view marks which are cited, and doors list the
cited ones and collapse the rest ("also retrieved, not cited"). Every field is cleaned
here; Markdown doors also escape what could close a link or open markup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from codeweaver.agent.user_text import say, source_label
from codeweaver.presentation.clean import one_line, safe_url
from codeweaver.words.markers import cited_numbers

TITLE_CHARS = 200
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


@dataclass(frozen=True)
class SourceView:
    """One numbered source, every field cleaned and on one line."""

    n: int
    title: str
    url: str  # http(s) only, else ""
    source: str  # the source's name (`installed_docs`)
    label: str  # what people call it ("installed docs")
    attribution: str
    reference: str
    cited: bool

    @property
    def licence(self) -> str:
        """The attribution without a leading "licence:" label (some sources add one)."""
        text = self.attribution
        return text[len("licence:") :].strip() if text.lower().startswith("licence:") else text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> SourceView:
        """A view back from `to_dict` (a recorded turn, a `done` event)."""
        return cls(
            n=int(item.get("n") or 0),
            title=one_line(item.get("title") or "", TITLE_CHARS) or "(untitled)",
            url=safe_url(item.get("url") or ""),
            source=one_line(item.get("source") or "", 60),
            label=one_line(item.get("label") or item.get("source") or "", 60),
            attribution=one_line(item.get("attribution") or "", 300),
            reference=one_line(item.get("reference") or "", 300),
            cited=bool(item.get("cited", True)),
        )


def source_views(
    answer: str, sources: Sequence[Mapping[str, Any]], language: str = "en"
) -> list[SourceView]:
    """`sources` numbered from 1, each marked cited when `answer` cites its number."""
    cited = set(cited_numbers(answer))
    views: list[SourceView] = []
    for n, item in enumerate(sources, 1):
        name = one_line(item.get("source") or "", 60)
        views.append(
            SourceView(
                n=n,
                title=one_line(item.get("title") or "", TITLE_CHARS) or "(untitled)",
                url=safe_url(item.get("url") or ""),
                source=name,
                label=source_label(name, language) if name else "",
                attribution=one_line(item.get("attribution") or "", 300),
                reference=one_line(item.get("reference") or "", 300),
                cited=n in cited,
            )
        )
    return views


def markdown_text(text: str) -> str:
    """`text` as Markdown that renders as itself: no link, code or tag can open in it."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _link_target(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")


def markdown_item(view: SourceView) -> str:
    """`[n] [title](url) — label, licence`."""
    title = markdown_text(view.title)
    link = f"[{title}]({_link_target(view.url)})" if view.url else title
    about = ", ".join(markdown_text(x) for x in (view.label, view.attribution) if x)
    return f"[{view.n}] {link}" + (f" — {about}" if about else "")


def sources_markdown(views: Sequence[SourceView], language: str = "en") -> str:
    """The list after an answer: the cited sources, then one line for the others."""
    if not views:
        return ""
    cited = [v for v in views if v.cited]
    others = [v for v in views if not v.cited]
    lines = [f"- {markdown_item(v)}" for v in cited]
    if others:
        names = "; ".join(f"[{v.n}] {markdown_text(v.title)}" for v in others)
        lines.append(f"- {say('also_retrieved', language, names=names)}")
    return f"\n\n**{say('sources_heading', language)}**\n\n" + "\n".join(lines)


def answer_markdown(done: Mapping[str, Any]) -> str:
    """A finished answer as one Markdown text: the checked answer, then its sources.
    What a door that cannot replace text sends (the OpenAI-compatible API)."""
    views = [SourceView.from_dict(s) for s in done.get("sources") or []]
    language = str(done.get("language") or "en")
    return str(done.get("answer") or "") + sources_markdown(views, language)


def plain_item(view: SourceView) -> str:
    """`[n] title url (reference) — licence`, for terminals and plain logs."""
    parts = [f"[{view.n}] {view.title}"]
    if view.url:
        parts.append(view.url)
    if view.reference:
        parts.append(f"({view.reference})")
    if view.attribution:
        parts.append(f"— {view.attribution}")
    return " ".join(parts)
