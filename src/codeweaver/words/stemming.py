"""Stemmers, one per purpose. They differ on purpose and were tuned and measured apart:

- `stem_for_subjects`: strips a plural "s" and Korean particles ("튜플의" → "튜플"), the
  lightest touch, for telling whether two questions name the same subject;
- `stem_for_doc_search`: an S-stemmer that folds plural forms only ("entries" → "entry"),
  for the installed-docs BM25 index, where API names must stay recognisable;
- `stem_for_cache_check`: Snowball after folding synonyms (dictionary → dict), leaving
  technology names, negations and dotted names alone, for the cache verifier and the
  grounding check, where word forms must not make two sentences differ.
"""

from __future__ import annotations

import snowballstemmer

from codeweaver.words.lexicon import COMPARE_SYNONYMS, NEGATION, TECHNOLOGIES

#: Korean particles and endings that attach to a noun ("튜플의", "튜플을" → "튜플").
KOREAN_SUFFIXES = (
    "에서는",
    "에서",
    "으로",
    "이랑",
    "하고",
    "에게",
    "까지",
    "부터",
    "처럼",
    "의",
    "을",
    "를",
    "은",
    "는",
    "이",
    "가",
    "와",
    "과",
    "에",
    "로",
    "랑",
    "도",
    "만",
)


def stem_for_subjects(word: str) -> str:
    """Korean particles off a Hangul word; a plural "s" off a Latin one (not "ss")."""
    if "가" <= word[0] <= "힣":
        for suffix in KOREAN_SUFFIXES:
            if len(word) > len(suffix) + 1 and word.endswith(suffix):
                return word[: -len(suffix)]
        return word
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def stem_for_doc_search(word: str) -> str:
    """S-stemmer (Harman 1991, plus -ches/-shes/-sses/-xes): folds plural forms only."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


_STEMMER = snowballstemmer.stemmer("english")


def stem_for_cache_check(word: str) -> str:
    """Synonyms folded, then Snowball English; technologies, negations, dotted names and
    words with digits or symbols are kept as they are."""
    word = COMPARE_SYNONYMS.get(word, word)
    if "." in word or not word.isalpha() or word in TECHNOLOGIES or word in NEGATION:
        return word
    return str(_STEMMER.stemWord(word))
