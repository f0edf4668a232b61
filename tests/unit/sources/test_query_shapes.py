"""Queries shaped per service, on real question titles (StackEval, the Korean set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeweaver.sources.query_shapes import (
    MAX_QUERY_CHARS,
    MAX_WEB_CHARS,
    code_terms,
    cut_words,
    error_line,
    is_error_line,
    is_latin,
    latin_query,
    phrase,
    title_query,
    web_query,
)

# Every StackEval post as a user pastes it (`message`), kept in the repository.
STACKEVAL_POSTS = Path(__file__).resolve().parents[2] / "fixtures" / "split" / "single_real.jsonl"


def test_cut_words_never_cuts_a_word() -> None:
    assert cut_words("alpha beta gamma", 12) == "alpha beta"
    assert cut_words("alpha beta", 40) == "alpha beta"
    assert cut_words("supercalifragilistic", 5) == "super"  # one long word: a hard cut


@pytest.mark.parametrize(
    ("text", "query"),
    [
        # StackEval titles, asked as they are: short ones are kept whole.
        ("Sort Dict by Values in Python 3.6+", "Sort Dict by Values in Python 3.6+"),
        (
            "How do I print an integer in binary with leading zeros?",
            "How do I print an integer in binary with leading zeros?",
        ),
        # A long title becomes its core terms, at most 12 words.
        (
            "Why does my Django app return a 403 Forbidden error when I submit the form "
            "with a CSRF token that I can see in the page source?",
            "Django app return 403 Forbidden error submit form CSRF token see page",
        ),
        # Operators the service would read ([tag], "phrase") are dropped.
        ('Using "[python]" tags in "quotes"', "Using python tags in quotes"),
    ],
)
def test_title_query(text: str, query: str) -> None:
    assert title_query(text) == query
    assert len(query.split()) <= 12 and len(query) <= MAX_QUERY_CHARS


def test_title_query_is_the_first_prose_line_of_a_post() -> None:
    post = "Android Studio could not find main class\n```\nclass Scratch {}\n```\nWhy?"
    assert title_query(post) == "Android Studio could not find main class"


def test_error_line_and_phrase() -> None:
    traceback = "Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'id'\n"
    assert error_line(traceback) == "KeyError: 'id'"
    assert is_error_line("KeyError: 'id'")
    assert not is_error_line("Why do I get KeyError: 'id' when reading JSON?")
    assert phrase('ValueError: invalid literal for int() with base 10: "x"') == (
        '"ValueError: invalid literal for int() with base 10: x"'
    )
    assert len(phrase("x " * 200)) <= MAX_QUERY_CHARS


def test_code_terms_keep_identifiers_never_prose() -> None:
    text = "Why does df.groupby().apply() ignore my_func when the DataFrame has a MultiIndex?"
    assert code_terms(text) == ["df.groupby", "apply", "my_func", "DataFrame"][:4]
    assert code_terms("Why is my code slow when I return early?") == []
    assert code_terms("see e.g. the README.md file") == []


def test_web_query_puts_the_error_line_first_and_stays_short() -> None:
    post = "My script fails when parsing\n```\nrow = data['id']\n```\nKeyError: 'id'\n" + (
        "more words " * 60
    )
    query = web_query(post)
    assert query.startswith("KeyError: 'id'")
    assert "```" not in query and len(query) <= MAX_WEB_CHARS


def test_latin_query_keeps_the_english_words_of_a_korean_question() -> None:
    known = frozenset({"python", "pandas", "typescript"})
    assert latin_query("pandas에서 NaT와 NaN 값을 각각 다른 값으로 채우는 방법", known) == (
        "pandas NaT NaN"
    )
    # A technology name and a version say too little to search on.
    assert latin_query("Python 3.6 이상에서 딕셔너리를 값 기준으로 정렬하는 방법", known) == ""
    assert latin_query("파이썬 딕셔너리 정렬", known) == ""


def test_is_latin() -> None:
    assert is_latin("pandas groupby")
    assert not is_latin("pandas를 사용해서")


def test_every_stackeval_title_gives_a_short_query() -> None:
    """On all 925 real questions: ≤ 150 characters, ≤ 12 words, no code fence."""
    lines = STACKEVAL_POSTS.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    queries = [title_query(row["message"]) for row in rows]
    assert len(queries) == 925
    assert all(0 < len(q) <= MAX_QUERY_CHARS and len(q.split()) <= 12 for q in queries)
    assert not any("```" in q for q in queries)
    assert all(len(web_query(row["message"])) <= MAX_WEB_CHARS for row in rows)
