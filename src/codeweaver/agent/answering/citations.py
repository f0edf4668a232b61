"""Keep an answer's `[n]` citations true to the numbered sources.

Small local models often skip inline citations or append their own source list. The
list is removed (the real one is rendered from the sources), citations pointing at no
source are dropped, and when the model cited nothing, each prose paragraph that shares
distinctive terms with a source is attributed to its best match — never a paragraph
that shares nothing with any source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from functools import partial

from codeweaver.agent.state import SearchResult
from codeweaver.agent.user_text import say
from codeweaver.words import tokens
from codeweaver.words.markers import CITATION, cited_numbers, outside_code

_CITATION_WITH_SPACE = re.compile(r"[ \t]?\[(\d{1,3})\]")
# Spaces within one line (`[^\S\n]`), and each optional mark followed by its own spaces:
# `\s*:?\s*(?:\*\*)?\s*:?\s*` tries every split of a run of spaces between four `\s*`.
_SOURCE_HEADING = re.compile(
    r"^[^\S\n]*(?:#+[^\S\n]*)?(?:\*\*)?(?:sources?(?: cited| used| list)?|references?|출처|"
    r"참고(?: ?자료)?|(?:참고 ?)?자료(?: ?목록)?)"
    r"[^\S\n]*(?::[^\S\n]*)?(?:\*\*[^\S\n]*)?(?::[^\S\n]*)?$",
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
    items = [bool(re.match(r"^\s*(?:[-*•]|\d+[.)]|\[\d+\])", line)) for line in lines]
    # A list, though an item may wrap onto a line of its own (the model copies excerpts).
    listy = bool(items) and items[0] and 2 * sum(items) >= len(items)
    if lines and not listy:
        return answer
    return answer[: match.start()].rstrip()


def strip_citations(text: str) -> str:
    """`text` without its `[n]` markers; code keeps its brackets."""
    return outside_code(text, lambda part: CITATION.sub(" ", part))


def _unmark(prose: str, drop: Callable[[int], bool]) -> str:
    """`prose` without the markers whose number `drop` accepts ("a [1][2]" → "a [2]")."""

    def replace(match: re.Match[str]) -> str:
        if not drop(int(match.group(1))):
            return match.group(0)
        spaced = match.group(0)[0] in " \t"
        return " " if spaced and prose[match.end() : match.end() + 1] == "[" else ""

    return _CITATION_WITH_SPACE.sub(replace, prose)


def drop_unknown_citations(answer: str, count: int) -> str:
    """Remove `[n]` markers that point at no listed source (code is left alone)."""
    return outside_code(answer, lambda part: _unmark(part, lambda n: not 1 <= n <= count))


def drop_sources(
    answer: str, sources: list[SearchResult], drop: Collection[int]
) -> tuple[str, list[SearchResult]]:
    """The answer and sources without the sources numbered in `drop` (1-based): their
    markers removed, the others renumbered in order (code is left alone)."""
    if not drop:
        return answer, sources
    kept = [n for n in range(1, len(sources) + 1) if n not in drop]
    new = {old: i for i, old in enumerate(kept, 1)}

    def renumber(part: str) -> str:
        part = _unmark(part, lambda n: n in drop)
        return CITATION.sub(lambda m: f"[{new.get(int(m.group(1)), int(m.group(1)))}]", part)

    return outside_code(answer, renumber), [sources[n - 1] for n in kept]


def remove_citations(answer: str, claims: Sequence[tuple[str, Collection[int]]]) -> str:
    """Remove the given `[n]` markers from each claim's sentence; the sentence stays.

    A claim is given as written (whitespace aside) with the numbers to remove; claims
    are looked for in order, each after the previous one, so a repeated sentence loses
    the right markers.
    """
    position = 0
    for text, numbers in claims:
        pattern = re.compile(r"\s+".join(re.escape(word) for word in text.split()))
        match = (pattern.search(answer, position) or pattern.search(answer)) if text else None
        if match is None:
            continue
        span = outside_code(match.group(0), partial(_unmark, drop=set(numbers).__contains__))
        answer = answer[: match.start()] + span + answer[match.end() :]
        position = match.start() + len(span)
    return answer


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


def append_citation(paragraph: str, n: int) -> str:
    stripped = paragraph.rstrip()
    if stripped and stripped[-1] in ".!?。:":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def prose_blocks(blocks: list[str]) -> Iterator[int]:
    """Indexes of the blank-line-separated `blocks` of an answer that hold no code."""
    in_code = False
    for i, block in enumerate(blocks):
        fences = sum(1 for line in block.splitlines() if _FENCE.match(line))
        starts_in_code, in_code = in_code, in_code != (fences % 2 == 1)
        if not (starts_in_code or fences):
            yield i


def attribute_citations(answer: str, sources: list[SearchResult]) -> str:
    """Add `[n]` to prose paragraphs that match a source, when the model cited none."""
    if not sources or CITATION.search(answer):
        return answer
    terms = [_source_terms(s) for s in sources]
    blocks = answer.split("\n\n")
    for i in prose_blocks(blocks):
        block = blocks[i]
        best = _best_source(block, terms)
        if best is not None:
            blocks[i] = append_citation(block, best + 1)
    return "\n\n".join(blocks)


def tidy_answer(answer: str, sources: list[SearchResult]) -> str:
    """The answer with only true, inline citations and no self-made source list."""
    cleaned = drop_unknown_citations(strip_source_list(answer.strip()), len(sources))
    return attribute_citations(cleaned, sources).strip()


def cited_first(
    answer: str, sources: Sequence[SearchResult]
) -> tuple[str, list[SearchResult], int]:
    """The sources with the cited ones first, in order of first citation, the answer's
    markers renumbered to match, and how many are cited.

    Idempotent: an answer already in this order comes back unchanged. Markers in code
    and markers naming no source stay as written.
    """
    order: list[int] = []
    for n in cited_numbers(answer):
        if 1 <= n <= len(sources) and n not in order:
            order.append(n)
    rest = [n for n in range(1, len(sources) + 1) if n not in order]
    new = {old: position for position, old in enumerate([*order, *rest], 1)}

    def renumber(prose: str) -> str:
        def one(match: re.Match[str]) -> str:
            n = int(match.group(1))
            return f"[{new[n]}]" if n in new else match.group(0)

        return CITATION.sub(one, prose)

    if all(old == position for old, position in new.items()):
        return answer, list(sources), len(order)
    reordered = [sources[n - 1] for n in [*order, *rest]]
    return outside_code(answer, renumber), reordered, len(order)


def with_source_notice(
    answer: str, sources: int, found: Sequence[SearchResult], language: str
) -> str:
    """`answer`, led by a notice when it cites none of its `sources` (the results it was
    written from), saying what the search did find: nothing, only results that are not
    relevant, or relevant ones the answer does not cite."""
    if any(1 <= n <= sources for n in cited_numbers(answer)):
        return answer
    distinct = len({r.get("reference") or r.get("url") or r.get("title") for r in found})
    if sources:
        notice = say("none_cited_note", language, count=sources)
    elif distinct:
        notice = say("no_relevant_note", language, count=distinct)
    else:
        notice = say("no_source_note", language)
    if answer.startswith(notice):
        return answer
    return f"{notice}\n\n{answer}"
