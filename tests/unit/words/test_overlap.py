"""Content words and term overlap (no stemming)."""

from __future__ import annotations

from codeweaver.words import overlap, tokens


def test_tokens_split_identifiers_and_drop_stopwords() -> None:
    assert tokens("How do I use parseHeader_value in Python 3?") == [
        "parse",
        "header",
        "value",
        "python",
        "3",
    ]
    assert tokens("파이썬 리스트") == ["파이썬", "리스트"]


def test_overlap_is_the_share_of_query_words_present() -> None:
    assert overlap("sort a dict by value", "Sorting dict values by key") == 1 / 3
    assert overlap("the and of", "anything") == 0.0
