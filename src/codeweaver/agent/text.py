"""Sentences and extractive summaries of results (the word tools are in `codeweaver.words`).

On two CPU cores a model call per search result would dominate the run, so scoring and
summarising kept results is lexical; the model's budget goes to the decisions and the
answer.
"""

from __future__ import annotations

import re

from codeweaver.words import WORD, overlap

_SENTENCE = re.compile(r"(?<=[.!?。])\s+(?=[A-Z가-힣`(])|\n{2,}")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


_FENCE_BLOCK = re.compile(r"(```.*?```)", re.DOTALL)
#: A summary of a text with code may be this long: the code is what answers a question.
MAX_CODE_SUMMARY_CHARS = 1100


def blocks(text: str) -> list[tuple[bool, str]]:
    """Paragraphs and fenced code blocks, in order, as (is_code, text)."""
    found: list[tuple[bool, str]] = []
    for part in _FENCE_BLOCK.split(text):
        if part.startswith("```") and part.endswith("```") and len(part) > 6:
            found.append((True, part.strip()))
        else:
            found += [(False, p.strip()) for p in re.split(r"\n{2,}", part) if p.strip()]
    return found


def _clip_code(block: str, max_chars: int) -> str:
    """A fenced block cut at a line boundary within `max_chars`, its fence closed."""
    if len(block) <= max_chars:
        return block
    lines = block[: max_chars - 4].splitlines()
    return "\n".join(lines[:-1] if len(lines) > 2 else lines) + "\n```"


def code_summary(text: str, query: str, max_chars: int = MAX_CODE_SUMMARY_CHARS) -> str:
    """The lead paragraph, the first code block with the paragraph that introduces it, then
    the paragraphs and blocks that share most words with `query`, in their original order
    and whole (a summary that flattens code into prose loses what answers the question)."""
    parts = [(c, b) for c, b in blocks(text) if c or WORD.search(b)]  # not "---"
    first_code = next(i for i, (is_code, _) in enumerate(parts) if is_code)
    chosen = {0, first_code, max(0, first_code - 1)}

    def size(indices: set[int]) -> int:
        return sum(len(parts[i][1]) + 2 for i in indices)

    if size(chosen) > max_chars:
        # The must-keep blocks alone are too long: trim the code, keep the lead.
        room = max_chars - size(chosen - {first_code})
        parts[first_code] = (True, _clip_code(parts[first_code][1], max(120, room)))
    else:
        ranked = sorted(range(len(parts)), key=lambda i: (-overlap(query, parts[i][1]), i))
        for i in ranked:
            if i not in chosen and size(chosen | {i}) <= max_chars:
                chosen.add(i)
    return "\n\n".join(parts[i][1] for i in sorted(chosen))


def extractive_summary(text: str, query: str, max_sentences: int = 3, max_chars: int = 420) -> str:
    """The leading sentence plus the sentences that share most words with `query`; for a
    text with code, `code_summary`.

    Order is kept so the summary reads as the original did.
    """
    if any(is_code for is_code, _ in blocks(text)):
        return code_summary(text, query)
    parts = sentences(text)
    if not parts:
        return ""
    if len(parts) <= max_sentences:
        chosen = list(range(len(parts)))
    else:
        ranked = sorted(range(1, len(parts)), key=lambda i: (-overlap(query, parts[i]), i))
        chosen = sorted([0, *ranked[: max_sentences - 1]])
    summary = " ".join(parts[i] for i in chosen)
    if len(summary) > max_chars:
        summary = summary[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return summary
