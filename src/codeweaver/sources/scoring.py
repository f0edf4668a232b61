"""One relevance scale for the online sources' results.

The services' own scores cannot be compared: Stack Overflow ranks by votes, GitHub code
search scores are unbounded and nearly constant, search engines give only a rank. So each
online result is scored on the question's terms — the share of the query's content words
its title and text contain — in [0, 1], the scale the installed docs' calibrated scores and
the relevance filter use. Sources may then weigh it by the quality signals they have.
"""

from __future__ import annotations

from codeweaver.words import overlap


def term_score(query: str, *texts: str) -> float:
    """Share of the query's distinct content words found in the texts, in [0, 1]."""
    return round(overlap(query, " ".join(texts)), 3)
