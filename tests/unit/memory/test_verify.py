"""The cache's same-question rules, on pairs taken from what the calibration sets showed."""

from __future__ import annotations

import pytest

from codeweaver.memory.semantic_cache import SHORT_QUESTION_THRESHOLD, decide
from codeweaver.memory.verify import content_size, same_question


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # Word forms and synonyms do not make two questions different.
        ("Normalizing a pandas DataFrame by row", "normalize a pandas dataframe `df` by row"),
        ("sorting a dict by its values", "sort a dictionary by value"),
        ("Sort a Python dictionary by value", "Sort dictionary `d` by value in ascending order"),
        ("How do I create a list of zeros?", "list of zeros"),
        # Variable names are placeholders, not part of the question.
        ("split string `s` on whitespace", "split string `text` on whitespace"),
    ],
)
def test_same_question(one: str, two: str) -> None:
    verdict = same_question(one, two)
    assert verdict.same, verdict.reason


@pytest.mark.parametrize(
    ("one", "two", "why"),
    [
        # Dotted names stay whole.
        (
            "How do I convert a datetime.date object into datetime.datetime in python?",
            "convert datetime object to date object in python",
            "different things",
        ),
        # Quantifiers are part of the question.
        (
            "How to check if one of the following items is in a list?",
            "check if all of the following items are in a list",
            "all",
        ),
        # A separator, an index or a number pins the task down.
        ("split elements of a list in python", "split elements of a list `l` by '\\t'", "\\t"),
        ("remove an element from a list by index", "remove index 2 element from a list", "2"),
        ("split string `s` by ','", "split string `s` by ';'", "values"),
        ("Sort dictionary `d` by value", "Sort dictionary `d` by value descending", "desc"),
    ],
)
def test_different_question(one: str, two: str, why: str) -> None:
    verdict = same_question(one, two)
    assert not verdict.same
    assert why in verdict.reason


def test_short_questions_need_much_closer_embeddings() -> None:
    assert content_size("reverse a list") == 2
    assert content_size("How do I convert a string to an integer in Python?") == 3
    # The rules find nothing to object to, but two subject words are too little to trust.
    below = decide("reverse a list", "Reverse list `x`", 0.82, 0.7)
    assert not below.same and "short question" in below.reason
    assert decide("reverse a list", "Reverse list `x`", SHORT_QUESTION_THRESHOLD, 0.7).same
    # A longer question at the same cosine is judged by the rules alone.
    assert decide(
        "How do I convert a string to an integer in Python?",
        "convert string to integer in python",
        0.82,
        0.7,
    ).same
    # The specific reason wins over the short-question one.
    assert "direction" in decide("str to int", "int to str", 0.99, 0.7).reason
