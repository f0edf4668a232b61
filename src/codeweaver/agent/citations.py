"""Keep an answer's `[n]` citations true to the numbered sources.

Small local models often skip inline citations or append their own source list. The
list is removed (the real one is rendered from the sources), citations pointing at no
source are dropped, and when the model cited nothing, each prose paragraph that shares
distinctive terms with a source is attributed to its best match — never a paragraph
that shares nothing with any source.
"""

from __future__ import annotations

import re

from codeweaver.agent.state import SearchResult
from codeweaver.agent.text import tokens

CITATION = re.compile(r"\[(\d{1,3})\]")
_CITATION_WITH_SPACE = re.compile(r"[ \t]?\[(\d{1,3})\]")
_SOURCE_HEADING = re.compile(
    r"^\s*(?:#+\s*)?(?:\*\*)?(?:sources?(?: cited| used)?|references?|출처|참고(?: ?자료)?)"
    r"\s*:?\s*(?:\*\*)?\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_FENCE = re.compile(r"^\s*```")
# Words in titles that say nothing about the content.
_GENERIC = frozenset({"python", "language", "reference", "topic", "builtins", "module"})
MIN_SHARED_TERMS = 2


def strip_source_list(answer: str) -> str:
    """Drop a trailing source list the model wrote itself."""
    headings = list(_SOURCE_HEADING.finditer(answer))
    if not headings:
        return answer
    match = headings[-1]
    tail = answer[match.end() :].strip()
    lines = [line for line in tail.splitlines() if line.strip()]
    listy = all(re.match(r"^\s*(?:[-*•]|\d+[.)]|\[\d+\])", line) for line in lines)
    if lines and not listy:
        return answer
    return answer[: match.start()].rstrip()


def drop_unknown_citations(answer: str, count: int) -> str:
    """Remove `[n]` markers that point at no listed source."""
    return _CITATION_WITH_SPACE.sub(
        lambda m: m.group(0) if 1 <= int(m.group(1)) <= count else "", answer
    )


def renumber_citations(answer: str, offset: int) -> str:
    if not offset:
        return answer
    return CITATION.sub(lambda m: f"[{int(m.group(1)) + offset}]", answer)


def _source_terms(source: SearchResult) -> tuple[set[str], set[str]]:
    title = {t for t in tokens(source["title"]) if t not in _GENERIC and not t.isdigit()}
    body = set(tokens(source.get("summary") or source.get("snippet", "")))
    return title, body


def _best_source(paragraph: str, terms: list[tuple[set[str], set[str]]]) -> int | None:
    words = set(tokens(paragraph))
    best, best_score = None, 0
    for index, (title, body) in enumerate(terms):
        if not title & words:
            continue  # the paragraph must name what the source documents
        score = 2 * len(title & words) + len(body & words)
        if score > best_score:
            best, best_score = index, score
    return best if best_score >= 2 + MIN_SHARED_TERMS else None


def _append_citation(paragraph: str, n: int) -> str:
    stripped = paragraph.rstrip()
    if stripped and stripped[-1] in ".!?。:":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def attribute_citations(answer: str, sources: list[SearchResult]) -> str:
    """Add `[n]` to prose paragraphs that match a source, when the model cited none."""
    if not sources or CITATION.search(answer):
        return answer
    terms = [_source_terms(s) for s in sources]
    blocks = answer.split("\n\n")
    in_code = False
    for i, block in enumerate(blocks):
        fences = sum(1 for line in block.splitlines() if _FENCE.match(line))
        starts_in_code = in_code
        in_code = in_code != (fences % 2 == 1)
        if starts_in_code or fences:
            continue
        best = _best_source(block, terms)
        if best is not None:
            blocks[i] = _append_citation(block, best + 1)
    return "\n\n".join(blocks)


def tidy_answer(answer: str, sources: list[SearchResult]) -> str:
    """The answer with only true, inline citations and no self-made source list."""
    cleaned = drop_unknown_citations(strip_source_list(answer.strip()), len(sources))
    return attribute_citations(cleaned, sources).strip()
