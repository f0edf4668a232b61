"""Each word list keeps its own contents: sizes and the members that tell them apart."""

from __future__ import annotations

from bm25s.stopwords import STOPWORDS_EN_PLUS

from codeweaver.sources.installed_docs import tokenizer
from codeweaver.words import (
    CACHE_CHECK_FILLER,
    CODE_SEARCH_VAGUE,
    COMPARE_SYNONYMS,
    FOLLOW_UP_WORDS,
    KOREAN_SUFFIXES,
    NEGATION,
    STOPWORDS,
    SUBJECT_NAMING,
    SUBJECT_VAGUE,
    TECHNOLOGIES,
    doc_search_stopwords,
)


def test_each_list_keeps_its_size() -> None:
    sizes = {
        "STOPWORDS": len(STOPWORDS),
        "doc_search_stopwords": len(doc_search_stopwords()),
        "CACHE_CHECK_FILLER": len(CACHE_CHECK_FILLER),
        "SUBJECT_VAGUE": len(SUBJECT_VAGUE),
        "CODE_SEARCH_VAGUE": len(CODE_SEARCH_VAGUE),
        "NEGATION": len(NEGATION),
        "TECHNOLOGIES": len(TECHNOLOGIES),
        "COMPARE_SYNONYMS": len(COMPARE_SYNONYMS),
        "FOLLOW_UP_WORDS": len(FOLLOW_UP_WORDS),
        "KOREAN_SUFFIXES": len(KOREAN_SUFFIXES),
    }
    assert sizes == {
        "STOPWORDS": 112,
        "doc_search_stopwords": 189,
        "CACHE_CHECK_FILLER": 112,
        "SUBJECT_VAGUE": 51,
        "CODE_SEARCH_VAGUE": 75,
        "NEGATION": 14,
        "TECHNOLOGIES": 58,
        "COMPARE_SYNONYMS": 40,
        "FOLLOW_UP_WORDS": 34,
        "KOREAN_SUFFIXES": 23,
    }


def test_the_lists_differ_where_their_purposes_do() -> None:
    docs = doc_search_stopwords()
    # The docs index must find the `re` module and drops "python" (every entry is Python).
    assert "re" not in docs and "python" in docs and "python" not in STOPWORDS
    assert docs == frozenset(STOPWORDS_EN_PLUS) - {"re"} | {"python", "please", "e.g", "i.e"} | {
        "would", "could", "also", "like", "want", "need", "way",
    }  # fmt: skip
    # Request phrasing is noise for overlap, not for the docs index.
    assert {"explain", "tell", "show"} <= STOPWORDS
    # Quality words never make two cached questions different.
    assert {"fastest", "pythonic", "elegant"} <= CACHE_CHECK_FILLER - STOPWORDS
    # Languages name no subject of a question; "error" says nothing about where to look.
    assert {"python", "rust", "차이", "예제"} <= SUBJECT_VAGUE
    assert {"error", "crash", "def", "self"} <= CODE_SEARCH_VAGUE
    assert "def" not in SUBJECT_VAGUE and "difference" not in CODE_SEARCH_VAGUE
    assert SUBJECT_NAMING <= SUBJECT_VAGUE
    assert set(KOREAN_SUFFIXES) <= FOLLOW_UP_WORDS and {"instead", "는요"} <= FOLLOW_UP_WORDS


def test_the_docs_tokenizer_uses_the_shared_stopwords_and_stemmer() -> None:
    assert doc_search_stopwords() == tokenizer.STOPWORDS
    assert tokenizer.stem("entries") == "entry"
