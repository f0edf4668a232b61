"""Question subjects: shared subjects, back references and what a follow-up adds."""

from __future__ import annotations

import pytest

from codeweaver.words import new_terms, refers_back, share_subject, subject_terms


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("What is a Python decorator?", "How do I write a decorator?", True),
        ("How do I sort a dict by value?", "How do I merge two dicts?", True),
        ("파이썬 리스트와 튜플의 차이가 뭐야?", "언제 튜플을 써야 해?", True),
        ("JWT가 뭐야?", "CORS 에러는 어떻게 해결해?", False),
        (
            "What is the difference between async/await and Promise?",
            "When should I use String and when &str in Rust?",
            False,
        ),
        (
            "How do I read a CSV file with pandas?",
            "What is the difference between a list and a tuple?",
            False,
        ),
    ],
)
def test_two_questions_share_a_subject(first: str, second: str, same: bool) -> None:
    assert share_subject(first, second) is same


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("What is a closure in JavaScript?", "How is it different from a callback?"),
        ("Why does my component re-render forever?", "How do I stop this?"),
        ("What is a Python generator?", "Please explain with an example."),
    ],
)
def test_back_references_keep_one_subject(first: str, second: str) -> None:
    assert share_subject(first, second)


def test_subject_terms_strip_particles_and_vague_words() -> None:
    assert subject_terms("파이썬 리스트와 튜플의 차이가 뭐야?") == {"파이썬", "리스트", "튜플"}
    assert subject_terms("What is the difference between lists and tuples in Python?") == {
        "list",
        "tuple",
        "between",
    }


def test_new_terms_keep_a_named_language_and_drop_follow_up_words() -> None:
    assert new_terms("what about in Rust?", "How do I read a file in Python?") == {"rust"}
    assert new_terms("그럼 러스트는?", "파이썬 리스트 정렬") == {"러스트"}
    # One particle is stripped, not a stack of them.
    assert new_terms("그럼 자바스크립트는요?", "파이썬에서 파일 읽는 법") == {"자바스크립트는요"}
    assert new_terms("what about instead?", "How do I read a file?") == set()


def test_refers_back() -> None:
    assert refers_back("How do I stop it?")
    assert refers_back("그거 어떻게 해?")
    assert not refers_back("How do I read a CSV file?")
