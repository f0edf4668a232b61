"""Answers as safe HTML: Markdown rendered with raw HTML disabled, then sanitised.

Answer and source text are untrusted (they come from the web and from a model), so a
`<script>` or an `onerror=` in them must reach the browser as inert text. markdown-it
escapes raw HTML (`html=False`); nh3 then keeps only a small allow-list of tags and
attributes and only http(s)/mailto links, as a second line of defence. Citation markers
`[n]` in plain text become links to the numbered source; those in code, in a link's text,
in an image's alt text or in any attribute stay as written.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import nh3
from markdown_it.token import Token

_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title", "class", "data-n"}, "code": {"class"}, "th": {"align"}}
_CITATION = re.compile(r"\[(\d{1,3})\]")


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _cited_text(text: str, sources: int) -> list[Token]:
    """`text` as tokens: plain runs, and a link for each `[n]` naming a source."""
    out: list[Token] = []
    last = 0
    for match in _CITATION.finditer(text):
        n = int(match.group(1))
        if not 1 <= n <= sources:
            continue
        if match.start() > last:
            out.append(Token("text", "", 0, content=text[last : match.start()]))
        attrs: dict[str, str | int | float] = {
            "class": "cite",
            "href": f"#source-{n}",
            "data-n": str(n),
        }
        out.append(Token("link_open", "a", 1, attrs=attrs))
        out.append(Token("text", "", 0, content=match.group(0)))
        out.append(Token("link_close", "a", -1))
        last = match.end()
    if last < len(text):
        out.append(Token("text", "", 0, content=text[last:]))
    return out


def _link_citations(tokens: list[Token], sources: int) -> None:
    """Rewrite the inline text tokens outside links in place. Code spans and images are
    tokens of their own (an image's alt text is its children), so they are never seen."""
    for block in tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        in_link = 0
        for token in block.children:
            if token.type == "link_open":
                in_link += 1
            elif token.type == "link_close":
                in_link -= 1
            if token.type == "text" and not in_link and _CITATION.search(token.content):
                children += _cited_text(token.content, sources)
            else:
                children.append(token)
        block.children = children


def render_answer(markdown: str, sources: int = 0) -> str:
    """Sanitised HTML of an answer; `[n]` with 1 ≤ n ≤ `sources` links to source n."""
    md = _markdown()
    env: dict[str, Any] = {}
    tokens = md.parse(markdown, env)
    if sources > 0:
        _link_citations(tokens, sources)
    html = md.renderer.render(tokens, md.options, env)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
