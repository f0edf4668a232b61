"""Cheap lexical tools: relevance by term overlap and extractive summaries.

On two CPU cores a model call per search result would dominate the run, so scoring and
summarising kept results is lexical; the model's budget goes to the decisions and the
answer.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+|[가-힣]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SENTENCE = re.compile(r"(?<=[.!?。])\s+(?=[A-Z가-힣`(])|\n{2,}")

_STOPWORD_TEXT = """
a an the and or but if then else of to in on at by for with from into onto as is are
was were be been being do does did doing have has had i you he she it we they me my
your our their this that these those what which who whom how why when where can
could should would will shall may might must not no so than too very just also about
over under again there here all any both each few more most other some such only own
same up down out off get got use using used want need please tell show explain way
ways
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def tokens(text: str) -> list[str]:
    """Lowercased content words; identifiers are split on case and underscores too."""
    found: list[str] = []
    for word in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " "))):
        lowered = word.lower()
        if lowered not in STOPWORDS and (len(lowered) > 1 or lowered.isdigit()):
            found.append(lowered)
    return found


def overlap(query: str, text: str) -> float:
    """Share of the query's distinct content words that occur in `text`, in [0, 1]."""
    wanted = set(tokens(query))
    if not wanted:
        return 0.0
    present = set(tokens(text))
    return len(wanted & present) / len(wanted)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def extractive_summary(text: str, query: str, max_sentences: int = 3, max_chars: int = 420) -> str:
    """The leading sentence plus the sentences that share most words with `query`.

    Order is kept so the summary reads as the original did.
    """
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
