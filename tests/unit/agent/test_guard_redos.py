"""The rules that read a question run in linear time on hostile text.

They run on every question, in the server's event loop or beside it, and a regex call
holds the GIL however long it takes: a question of 8,000 spaces once cost the planner
seconds. Each adversarial question here is read by every rule-based step of the graph's
first nodes (route, plan, analyze, classify) within a budget far below that.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from codeweaver.agent.nodes.plan import plan_by_rules
from codeweaver.agent.rules.guard import _SEPARATOR, depends_on_context, followup_type, guard
from codeweaver.agent.rules.intent import rule_intent
from codeweaver.agent.rules.queries import search_form
from codeweaver.agent.rules.router import is_small_talk, route_message
from codeweaver.words.language import answer_language
from tests.timing import seconds

N = 7990
EARLIER = "How do I read a file in Python?"
# The outside tester's 24 shapes of an 8,000-character question.
ADVERSARIAL = {
    "tabs": "a" + "\t" * N + "b?",
    "spaces": "How " + " " * N + "x?",
    "space-tab": "a" + " \t" * (N // 2) + "#x",
    "eee": "e" * N,
    "ab": "ab" * (N // 2),
    "digits": "1" * N,
    "a.": "a." * (N // 2),
    "a_": "a_" * (N // 2),
    "E1": "E1" * (N // 2),
    "[": "[" * N,
    "Aa": "Aa" * (N // 2),
    "aA": "aA" * (N // 2),
    "a-": "a-" * (N // 2),
    "newlines": "x" + " \n" * (N // 2) + "?",
    "backticks": "`" * N,
    "qmarks": "? " * (N // 2),
    "semicolons": " ; " * (N // 3),
    "pipes": " | " * (N // 3),
    "and": "and " * (N // 4),
    "korean": "가 " * (N // 2),
    "numbered": "\n".join(f"{i}. what is x{i}?" for i in range(N // 16)),
    "Error": "aError " * (N // 7),
    "dotted": "a.b" * (N // 3),
    "brackets": "[a](b " * (N // 6),
}
RULES: dict[str, Callable[[str], object]] = {
    "route_message": lambda q: route_message(q, None),
    "route_message (follow-up)": lambda q: route_message(q, EARLIER),
    "answer_language": lambda q: answer_language(q, None),
    "plan_by_rules": plan_by_rules,
    "followup_type": lambda q: followup_type(q, EARLIER),
    "depends_on_context": depends_on_context,
    "rule_intent": rule_intent,
    "search_form": search_form,
}
BUDGET = 0.1  # seconds for one rule on one question; the old separator took 2.4 s


@pytest.fixture
def deadline() -> Callable[[Callable[[], object]], float]:
    """Seconds a call takes, cut short at 5 s."""
    return lambda call: seconds(call, 5.0)


def test_the_guard_reads_a_padded_question_fast(
    deadline: Callable[[Callable[[], object]], float],
) -> None:
    padded = "How" + " " * N + "x?"
    assert len(padded) <= 8000
    assert deadline(lambda: guard(padded)) < BUDGET
    assert deadline(lambda: plan_by_rules(padded)) < BUDGET
    assert plan_by_rules(padded) == ("single_topic", [padded], "rule: one question")


def test_the_separator_splits_as_before() -> None:
    """Only where a match may start changed: runs of spaces still go with the separator."""
    assert _SEPARATOR.split("a ; b") == ["a", "b"]
    assert _SEPARATOR.split("a  ;\t b | c") == ["a", "b", "c"]
    assert _SEPARATOR.split("x = a|b; y") == ["x = a|b", "y"]
    assert _SEPARATOR.split("a ; ;b") == ["a", "", "b"]
    assert _SEPARATOR.split("a |  | b") == ["a", "| b"]


@pytest.mark.parametrize("shape", list(ADVERSARIAL))
def test_every_rule_reads_an_adversarial_question_fast(
    shape: str, deadline: Callable[[Callable[[], object]], float]
) -> None:
    question = ADVERSARIAL[shape][:8000].strip()
    slow = {
        name: round(took, 3)
        for name, rule in RULES.items()
        if (took := deadline(lambda rule=rule: rule(question))) > BUDGET  # type: ignore[misc]
    }
    assert slow == {}


def test_small_talk_with_a_run_of_laughs_is_read_fast(
    deadline: Callable[[Callable[[], object]], float],
) -> None:
    """`(?:ㅎ+)*` tried 2^n ways to split n ㅎ before failing: 6 s at 24, years at 57."""
    hostile = "hi" + "ㅎ" * 57 + "0"
    assert len(hostile) <= 60  # short enough to be tried as small talk
    assert deadline(lambda: is_small_talk(hostile)) < BUDGET
    assert not is_small_talk(hostile)
    assert is_small_talk("hi ㅎㅎㅎ") and is_small_talk("고마워요 ㅋㅋ")
