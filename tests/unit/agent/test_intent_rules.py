"""Intent by rules, on real StackEval questions (Stack Overflow, CC BY-SA 4.0, via
ProsusAI/stack-eval; cited by line)."""

from __future__ import annotations

import pytest

from codeweaver.agent.rules.intent import rule_intent


@pytest.mark.parametrize(
    ("line", "question"),
    [
        (7, "jetpack compose java.lang.IllegalStateException: Start/end imbalance"),
        (18, "PHP str\\_replace(): Passing null to parameter #3 ($subject) of type "
             "array|string is deprecated\nI'm getting this error while running my app:"),
        (2, 'Android Studio could not find or load main class of "Scratch" file\n'
            "But when I run that scratch file ( by pressing green button near to the class "
            "name or `main` method), I get this error:\n\n\n\n```\nError: Could not "
            "find or load main class Scratch\n\n```"),
        (46, "Error : Trying to access array offset on value of type int"),
    ],
)  # fmt: skip
def test_questions_that_quote_or_name_a_failure_are_debugging(line: int, question: str) -> None:
    assert rule_intent(question) == "debugging"


@pytest.mark.parametrize(
    ("line", "question"),
    [
        (1, "How do I print an integer in binary with leading zeros?\nI'm doing some bit "
            "twiddling and I'd like to print all the bits in my u16."),
        (3, "In Java, when should we use private instance methods in interfaces?"),
        (13, "Python range to list"),
        (14, "Sort Dict by Values in Python 3.6+"),
    ],
)  # fmt: skip
def test_how_to_and_conceptual_questions_are_learning(line: int, question: str) -> None:
    assert rule_intent(question) == "learning"


def test_a_request_to_review_shown_code_is_code_review() -> None:
    question = "Can you review my code?\n```python\ndef add(a, b): return a+b\n```"
    assert rule_intent(question) == "code_review"
    # Without code to review, "review" is just a word of a how-to question.
    assert rule_intent("How do I review pull requests faster?") == "learning"


def test_korean_error_words_are_debugging() -> None:
    assert rule_intent("pandas에서 KeyError가 나요") == "debugging"
    assert rule_intent("파이썬 리스트를 뒤집는 방법") == "learning"
