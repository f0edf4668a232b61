"""Content words, stopwords and term overlap: the word tools every layer shares.

Sources score results with them and the agent scores and summarises with them, so they
live below both and import nothing of the package.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9]+|[가-힣]+")  # a Latin or Hangul word
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

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
    for word in WORD.findall(_CAMEL.sub(" ", text.replace("_", " "))):
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
