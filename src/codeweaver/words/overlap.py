"""Content words and term overlap: how sources score results and the agent scores and
summarises them (no stemming: a cheap, exact measure)."""

from __future__ import annotations

from codeweaver.words.patterns import OVERLAP_CAMEL_SPLIT, WORD
from codeweaver.words.stopwords import STOPWORDS


def tokens(text: str) -> list[str]:
    """Lowercased content words; identifiers are split on case and underscores too."""
    found: list[str] = []
    for word in WORD.findall(OVERLAP_CAMEL_SPLIT.sub(" ", text.replace("_", " "))):
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
