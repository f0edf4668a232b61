"""Whether two questions are about one thing, and what a follow-up adds: the subject words
the router, the planner and the guard compare (stemmed by `stem_for_subjects`)."""

from __future__ import annotations

import re

from codeweaver.words.overlap import tokens
from codeweaver.words.stemming import stem_for_subjects
from codeweaver.words.stopwords import FOLLOW_UP_WORDS, SUBJECT_NAMING, SUBJECT_VAGUE


def subject_terms(text: str) -> set[str]:
    """Distinctive words of a question, lightly stemmed, for comparing subjects."""
    return {
        s
        for s in (stem_for_subjects(t) for t in tokens(text))
        if s not in SUBJECT_VAGUE and len(s) > 1
    }


_BACK_REFERENCE = re.compile(
    r"\b(it|its|this|that|these|those|they|them|one)\b|그거|그것|그건|이거|이것|이건|그럼",
    re.IGNORECASE,
)


def share_subject(first: str, second: str) -> bool:
    """Whether two questions are about one thing: they name a common subject, or the
    second refers back to the first ("how do I stop it?") or names nothing of its own."""
    one, two = subject_terms(first), subject_terms(second)
    return bool(one & two) or not one or not two or refers_back(second)


def refers_back(text: str) -> bool:
    """Whether the text points at something said before ("it", "that", "그거")."""
    return bool(_BACK_REFERENCE.search(text))


def new_terms(text: str, earlier: str) -> set[str]:
    """Words of `text` that name something `earlier` did not: a follow-up's new subject."""
    own = {
        s
        for s in (stem_for_subjects(t) for t in tokens(text))
        if len(s) > 1
        and s not in FOLLOW_UP_WORDS
        and (s not in SUBJECT_VAGUE or s in SUBJECT_NAMING)
    }
    return own - {stem_for_subjects(t) for t in tokens(earlier)}
