"""Word-level tools every layer shares: what a word is, which words to drop, how to stem
them, and the comparisons built on them.

Sources score results with them, the agent scores, summarises and routes with them, the
cache verifier and the grounding check compare with them, so they live below all of these
and import nothing of the package.

Each tool keeps its own variant where the purposes differ (three stemmers, several word
lists and regular expressions): they were tuned and measured separately, so they are named
by purpose, never merged.

- `patterns`: the word regular expressions, one per purpose;
- `stopwords`: the lists of words to drop, one per purpose (vague-word sets included);
- `lexicon`: negations, technology names and synonyms;
- `stemming`: `stem_for_subjects`, `stem_for_doc_search`, `stem_for_cache_check`;
- `overlap`: content words and term overlap (`tokens`, `overlap`);
- `subjects`: whether two questions share a subject, what a follow-up adds;
- `compare`: stemmed words for the cache verifier and the grounding check, and what a
  translation dropped.
"""

from __future__ import annotations

from codeweaver.words.compare import (
    compare_terms,
    content_terms,
    lost_in_translation,
    stemmed_words,
    subject_words,
)
from codeweaver.words.lexicon import COMPARE_SYNONYMS, NEGATION, TECHNOLOGIES
from codeweaver.words.overlap import overlap, tokens
from codeweaver.words.patterns import WORD
from codeweaver.words.stemming import (
    KOREAN_SUFFIXES,
    stem_for_cache_check,
    stem_for_doc_search,
    stem_for_subjects,
)
from codeweaver.words.stopwords import (
    CACHE_CHECK_FILLER,
    CODE_SEARCH_VAGUE,
    FOLLOW_UP_WORDS,
    STOPWORDS,
    SUBJECT_NAMING,
    SUBJECT_VAGUE,
    doc_search_stopwords,
)
from codeweaver.words.subjects import new_terms, refers_back, share_subject, subject_terms

__all__ = [
    "CACHE_CHECK_FILLER",
    "CODE_SEARCH_VAGUE",
    "COMPARE_SYNONYMS",
    "FOLLOW_UP_WORDS",
    "KOREAN_SUFFIXES",
    "NEGATION",
    "STOPWORDS",
    "SUBJECT_NAMING",
    "SUBJECT_VAGUE",
    "TECHNOLOGIES",
    "WORD",
    "compare_terms",
    "content_terms",
    "doc_search_stopwords",
    "lost_in_translation",
    "new_terms",
    "overlap",
    "refers_back",
    "share_subject",
    "stem_for_cache_check",
    "stem_for_doc_search",
    "stem_for_subjects",
    "stemmed_words",
    "subject_terms",
    "subject_words",
    "tokens",
]
