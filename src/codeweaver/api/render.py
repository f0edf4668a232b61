"""Answers as safe HTML: Markdown rendered with raw HTML disabled, then sanitised.

Answer and source text are untrusted (they come from the web and from a model), so a
`<script>` or an `onerror=` in them must reach the browser as inert text. markdown-it
escapes raw HTML (`html=False`); nh3 then keeps only a small allow-list of tags and
attributes and only http(s)/mailto links, as a second line of defence. Citation markers
`[n]` outside code become links to the numbered source.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import nh3

_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title", "class", "data-n"}, "code": {"class"}, "th": {"align"}}
_CITATION = re.compile(r"\[(\d{1,3})\]")
_CODE = re.compile(r"(<pre>.*?</pre>|<code>.*?</code>)", re.DOTALL)


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _link_citations(html: str, sources: int) -> str:
    def link(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if not 1 <= n <= sources:
            return match.group(0)
        return f'<a class="cite" href="#source-{n}" data-n="{n}">[{n}]</a>'

    parts = _CODE.split(html)
    return "".join(part if i % 2 else _CITATION.sub(link, part) for i, part in enumerate(parts))


def render_answer(markdown: str, sources: int = 0) -> str:
    """Sanitised HTML of an answer; `[n]` with 1 ≤ n ≤ `sources` links to source n."""
    html = _markdown().render(markdown)
    html = _link_citations(html, sources)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def safe_url(url: str) -> str:
    """The URL if it is http(s), else empty: a source's link must never run script."""
    return url if re.match(r"^https?://", url.strip(), re.IGNORECASE) else ""
