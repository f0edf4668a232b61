"""Stemmed words for comparing two texts: a new question with a cached one (the cache
verifier), a claim with its sources (the grounding check), a question with its English
form (`lost_in_translation`). Words are read by `COMPARE_WORD` and stemmed by
`stem_for_cache_check`, so word forms and synonyms do not make two sentences differ."""

from __future__ import annotations

from codeweaver.words.lexicon import NEGATION, TECHNOLOGIES
from codeweaver.words.patterns import (
    COMPARE_WORD,
    PLACEHOLDER,
    TRANSLATION_LATIN,
    TRANSLATION_NUMBER,
)
from codeweaver.words.stemming import stem_for_cache_check
from codeweaver.words.stopwords import CACHE_CHECK_FILLER

_FILLER_STEMS = CACHE_CHECK_FILLER | {stem_for_cache_check(w) for w in CACHE_CHECK_FILLER}


def compare_terms(text: str, keep_quoted: bool = False) -> list[str]:
    """The stemmed words of `text`, in order; placeholders (backticked or quoted names and
    values) set aside unless `keep_quoted`."""
    text = text.lower().replace("n't", "nt")
    if not keep_quoted:
        text = PLACEHOLDER.sub(" ", text)
    text = text.replace("data frame", "dataframe")
    return [stem_for_cache_check(w) for w in COMPARE_WORD.findall(text)]


def content_terms(words: list[str]) -> list[str]:
    """`words` without filler, negations and technology names: the subject words."""
    return [
        w for w in words if w not in _FILLER_STEMS and w not in NEGATION and w not in TECHNOLOGIES
    ]


def stemmed_words(text: str) -> set[str]:
    """Every word of `text`, stemmed, quoted code included (for comparing with sources)."""
    return set(compare_terms(text, keep_quoted=True))


def subject_words(text: str) -> set[str]:
    """The words that carry a sentence's subject: no filler, negation or technology."""
    return set(content_terms(compare_terms(text, keep_quoted=True)))


def lost_in_translation(original: str, translation: str) -> set[str]:
    """Numbers and Latin-script terms (names, versions) of `original` that its translation
    dropped: a key that lost them could meet the wrong question, so it is not used."""
    kept_numbers = set(TRANSLATION_NUMBER.findall(translation))
    kept_words = {w.lower() for w in TRANSLATION_LATIN.findall(translation)}
    lost = {n for n in TRANSLATION_NUMBER.findall(original) if n not in kept_numbers}
    lost |= {
        w for w in TRANSLATION_LATIN.findall(original) if len(w) > 1 and w.lower() not in kept_words
    }
    return lost
