"""Stemmed words for the cache verifier and the grounding check, and translation losses."""

from __future__ import annotations

from codeweaver.words import (
    compare_terms,
    content_terms,
    lost_in_translation,
    stemmed_words,
    subject_words,
)


def test_compare_terms_set_placeholders_aside_unless_kept() -> None:
    text = "Convert a data frame `df` to dicts, doesn't it?"
    assert compare_terms(text) == ["convert", "a", "df", "to", "dict", "doesnt", "it"]
    assert compare_terms("Convert a data frame `df` to dicts", keep_quoted=True) == [
        "convert",
        "a",
        "df",
        "df",
        "to",
        "dict",
    ]


def test_content_terms_drop_filler_negation_and_technologies() -> None:
    words = compare_terms("How do I sort a Python dictionary by values without numpy?")
    assert content_terms(words) == ["sort", "dict", "valu"]


def test_stemmed_and_subject_words_keep_quoted_code() -> None:
    text = "Don't use `os.path.join` without checking the files in Python"
    assert stemmed_words(text) == {
        "dont", "use", "os.path.join", "without", "check", "the", "file", "in", "python",
    }  # fmt: skip
    assert subject_words(text) == {"os.path.join", "file", "check"}


def test_a_translation_that_drops_a_number_or_a_name_is_caught() -> None:
    lost = lost_in_translation("헤어진지 3주가 아직안됐네", "How long has your hair been growing?")
    assert lost == {"3"}
    assert lost_in_translation("JWT가 뭐야?", "What is a token?") == {"JWT"}
    assert lost_in_translation("파이썬 3.12에서 JWT 검증", "Verify a JWT in Python 3.12") == set()
    assert lost_in_translation("리스트를 뒤집는 방법", "How do I reverse a list?") == set()
