"""The deterministic too-many guard and the single-question fast path."""

from __future__ import annotations

import pytest

from codeweaver.agent.rules.guard import (
    depends_on_context,
    followup_type,
    guard,
    question_candidates,
)
from codeweaver.words.language import answer_language, detect_language


@pytest.mark.parametrize(
    "message",
    [
        "JWT? CORS? Docker?",
        "JWT가 뭐야？ CORS는？ 도커는？",
        "1. What is JWT\n2. How do I fix CORS\n3. What is Docker",
        "- how do I set up pytest\n- how do I mock httpx\n- how do I measure coverage",
        "What is a mutex; what is a semaphore; when should I use each",
    ],
)
def test_three_or_more_questions_are_too_many(message: str) -> None:
    assert guard(message).case == "too_many"


@pytest.mark.parametrize(
    "message",
    [
        "How do I read a file line by line in Python?",
        "파이썬에서 파일을 한 줄씩 읽으려면 어떻게 해?",
        "Why does this raise KeyError?\n```python\nd = {}\nd['a']?\nx?\ny?\n```",
        "My test fails with `assert x?` and `y?` and `z?` in the output, why?",
        "I use Flask.\nHow do I add CORS?",
        # A StackEval title: the question in brackets glosses the one before it.
        "Recommended method for reloading `.zshrc`? (`source` VS `exec`?)",
    ],
)
def test_obvious_single_question_needs_no_model(message: str) -> None:
    decision = guard(message)
    assert decision.case == "single_topic", decision


@pytest.mark.parametrize(
    "message",
    [
        "JWT가 뭐야? CORS 에러는 어떻게 해결해?",
        "What is JWT and how does OAuth use it?",
        "How do I add CORS?\nAlso, how do I deploy Flask?",
    ],
)
def test_ambiguous_messages_go_to_the_model(message: str) -> None:
    assert guard(message).case is None


def test_a_tagged_question_in_a_list_of_three_still_counts() -> None:
    message = (
        "Python, Matplotlib, subplot: How to set the axis range? And another thing: "
        "(Django) how to get month name? Also, how to check if character exists in "
        "DataFrame cell?"
    )
    assert guard(message).case == "too_many"


def test_candidates_of_two_questions() -> None:
    assert question_candidates("JWT가 뭐야? CORS 에러는 어떻게 해결해?") == [
        "JWT가 뭐야?",
        "CORS 에러는 어떻게 해결해?",
    ]


def test_context_lines_are_not_questions() -> None:
    message = "I am on Ubuntu 22.04.\nI installed Python 3.11.\nI use venv.\nWhy is pip missing?"
    assert guard(message).case != "too_many"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("How do I read a file?", "en"),
        ("JWT가 뭐야?", "ko"),
        ("Python에서 asyncio.gather 쓰는 법", "ko"),
        ("Pythonでファイルを読む方法", "ja"),
    ],
)
def test_language_detection(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_response_language_override() -> None:
    assert answer_language("JWT가 뭐야?", "en") == "en"
    assert answer_language("JWT가 뭐야?", None) == "ko"


def test_leading_joiners_are_dropped_from_candidates() -> None:
    assert question_candidates("How do I center a div? And what is a mutex?") == [
        "How do I center a div?",
        "What is a mutex?",
    ]


@pytest.mark.parametrize(
    ("question", "previous", "expected"),
    [
        ("How do I read a file?", None, "new_topic"),
        ("그럼 예제 코드도 보여줘", "How do I read a file line by line?", "clarification"),
        ("Can you show an example?", "How do I read a file line by line?", "clarification"),
        ("Is it thread-safe?", "How do I append to a list?", "clarification"),
        ("What about writing?", "How do I read a file?", "clarification"),
        (
            "How do I write a file line by line?",
            "How do I read a file line by line?",
            "independent",
        ),
        (
            "How do I sort a list of dicts by key?",
            "How do I read a file line by line?",
            "new_topic",
        ),
    ],
)
def test_followup_type(question: str, previous: str | None, expected: str) -> None:
    assert followup_type(question, previous) == expected


@pytest.mark.parametrize(
    ("question", "personal"),
    [
        ("How do I read a file line by line?", False),
        ("Why does my build fail?", True),
        ("내 코드가 왜 느려?", True),
        ("Why does this fail?\n```python\nx = 1/0\n```", True),
        ("What is a mutex?", False),
    ],
)
def test_depends_on_context(question: str, personal: bool) -> None:
    assert depends_on_context(question) is personal
