"""The planning rules on real posts and real joined questions.

Fixtures: `tests/fixtures/split/` (StackEval posts, cited by their line in
`stack-eval.jsonl`; joined messages, cited by their row and the sources of their parts).
CS1QA messages (cyoon47/CS1QA, MIT) are quoted with their id.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from codeweaver.agent.nodes.plan import plan_by_rules
from codeweaver.agent.rules.guard import guard, independent_questions, question_candidates
from codeweaver_eval.metrics import questions_match

SPLIT = Path(__file__).parents[2] / "fixtures" / "split"


@cache
def _rows(name: str) -> tuple[dict[str, Any], ...]:
    lines = (SPLIT / name).read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines)


def post(line: int) -> str:
    """The StackEval post on `line` of stack-eval.jsonl, as the user pasted it."""
    row = _rows("single_real.jsonl")[line - 1]
    assert row["line"] == line
    return str(row["message"])


def joined(row: int) -> dict[str, Any]:
    return _rows("joined.jsonl")[row - 1]


# Posts the question-mark guard used to decline (the reason it gave), or split in two.
@pytest.mark.parametrize(
    "line",
    [
        3,  # 4 question marks
        11,  # 5 question candidates (bulleted assumptions)
        49,  # 3 question marks: "…? Or does Java already optimize this?"
        71,  # 3 question candidates: "what does X mean and why is …?"
        185,  # 3 question marks, one of them "Also, why doesn't the compiler complain …?"
        346,  # 4 question candidates, "What to do ?" after the code
        31,  # was split into two questions
        62,  # was split into two questions
    ],
)
def test_real_posts_formerly_declined_or_split_are_one_question(line: int) -> None:
    message = post(line)
    decision = guard(message)
    assert decision.case == "single_topic", decision
    assert plan_by_rules(message) == ("single_topic", [message], f"rule: {decision.reason}")


def test_numbered_sub_questions_of_a_post_stay_one_question() -> None:
    # StackEval line 642: "so 2 questions:\n1) why didn't it happen …?\n2) how to do the
    # second way?" — both about the axios typing problem of the title.
    message = post(642)
    assert "2) how to do the second way?" in message
    assert guard(message).case == "single_topic"
    # "When I add the type to the get method it works:" opens like a question but
    # states something: it is prose, which makes the message a post.
    assert "When I add the type to the get method it works:" not in question_candidates(message)
    assert independent_questions(message)[1]


def test_question_marks_in_quoted_lines_and_code_do_not_count() -> None:
    # StackEval line 754 quotes a TypeScript error full of "start?: number".
    assert not any("start?" in c for c in question_candidates(post(754)))
    # StackEval line 142: `block_given?` three times in the fenced template and once
    # inline ("However `block_given?` returns true …"); only the title's and the last
    # paragraph's "?" are the asker's.
    assert question_candidates(post(142)) == [
        "block\\_given?",
        "What's going on here and why is this happening?",
    ]


def test_a_post_is_recognised_by_its_body() -> None:
    # StackEval line 185: title, code, then two "?" paragraphs — a post; its first
    # question stands for it.
    questions, is_post = independent_questions(post(185))
    assert is_post
    assert questions == ["Why is int x{ y = 5 } possible?"]


def test_all_real_posts_are_planned_single_by_rules() -> None:
    # The bar is 98 % planned single; the rules must never decline or split a post.
    outcomes = Counter(
        (plan_by_rules(row["message"]) or ("needs_model",))[0] for row in _rows("single_real.jsonl")
    )
    assert sum(outcomes.values()) == 925
    assert outcomes["too_many"] == outcomes["multiple_questions"] == 0
    assert outcomes["single_topic"] / 925 >= 0.98


@pytest.mark.parametrize(("count", "case"), [(2, "multiple_questions"), (3, "too_many")])
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_joined_real_questions_are_split_or_declined(count: int, case: str, lang: str) -> None:
    rows = [r for r in _rows("joined.jsonl") if r["lang"] == lang and len(r["questions"]) == count]
    assert len(rows) == (200 if lang == "en" else 100)
    right = 0
    for row in rows:
        planned = plan_by_rules(row["message"])
        if planned is not None and planned[0] == case:
            right += case == "too_many" or questions_match(row["questions"], planned[1])
    assert right / len(rows) >= 0.95


@pytest.mark.parametrize(
    ("row", "style", "case"),
    [
        (1, "also", "multiple_questions"),  # StackEval lines 734, 399
        (3, "chain", "multiple_questions"),  # StackEval lines 140, 620 (a statement, then "?")
        (4, "lines", "multiple_questions"),  # CoNaLa 2270, 1788 (no "?" on the second line)
        (205, "numbered", "too_many"),  # StackEval lines 675, 279, 476
        (204, "lines", "too_many"),  # CoNaLa 523, 1342, 832
        (401, "a_geurigo", "multiple_questions"),  # songys id 3255 q1, id 4886 q2
        (501, "a_geurigo", "too_many"),  # songys id 868 q1, id 1936 q2, id 1098 q1
        (504, "lines", "too_many"),  # songys id 1193 q2, id 3254 q1, id 4491 q1
    ],
)
def test_joined_messages_by_rule(row: int, style: str, case: str) -> None:
    example = joined(row)
    assert example["style"] == style
    planned = plan_by_rules(example["message"])
    assert planned is not None
    assert planned[0] == case
    # The questions come back without their connective ("Also,", "아 그리고").
    assert questions_match(example["questions"], planned[1])
    assert not any(q.startswith(("Also", "아 그리고", "And another")) for q in planned[1])


def test_jwt_cors_docker_is_still_declined_without_the_model() -> None:
    assert plan_by_rules("JWT? CORS? Docker?") == (
        "too_many",
        ["JWT?", "CORS?", "Docker?"],
        "guard: 3 independent questions",
    )


@pytest.mark.parametrize(
    ("message", "case"),
    [
        # CS1QA q_dev id 1821: the second "?" asks for help and names no subject.
        (
            "Hello TA, can you have a look at my codes of skewing, it says syntax error when "
            "I call skew function as skew(img, direction.lower(), ang)? What did I do wrong "
            "here?",
            "single_topic",
        ),
        # CS1QA q_test id 3715: "Yeah?" names nothing; what follows is its subject.
        ("Yeah?Then you can't show the whole card again after wrong??", "single_topic"),
        # CS1QA q_dev id 3794: a request to explain more, then what it is about.
        (
            "I don't understand well, can you explain a little more?\nAre you saying you need "
            "to average the temperatures for all years for each month??",
            "single_topic",
        ),
        # CS1QA q_test id 2359: "Or …?" offers another way to the same goal.
        (
            "Assistant, can you make a conditional statement that ends exactly where the "
            "beeper ends?Or do I make a for loop with numbers according to the size of the "
            "world?",
            "single_topic",
        ),
        # CS1QA q_test id 571: " / " in a formula separates nothing.
        (
            "Why did you use n-1 instead of n in x = float(i) / (n-1) * 2 * pi on line 9?",
            "single_topic",
        ),
    ],
)
def test_student_messages_that_continue_one_question(message: str, case: str) -> None:
    planned = plan_by_rules(message)
    assert planned is not None
    assert planned[0] == case


def test_listed_questions_after_an_intro_are_still_counted() -> None:
    # An intro from a real post body (StackEval line 1) before three listed questions
    # with different subjects (joined.jsonl row 205: StackEval lines 675, 279, 476).
    intro = "I'm doing some bit twiddling and I'd like to print all the bits in my u16."
    message = f"Some background first.\n{intro}\n{joined(205)['message']}"
    questions, is_post = independent_questions(message)
    assert is_post
    assert len(questions) == 3
    assert guard(message).case == "too_many"


def test_a_sentence_joining_two_asks_goes_to_the_model() -> None:
    # CS1QA q_dev id 682: one sentence, "… and why you need it": only the model can list it.
    message = "Explain what the harvest function does in task1 and why you need it."
    assert guard(message).case is None
    assert plan_by_rules(message) is None


@pytest.mark.parametrize(
    ("row", "count"),
    [
        (205, 4),  # numbered
        # one per line; "How to print a list with integers …" shares "print" and
        # "integer" with the title, so it continues the post's own question
        (204, 3),
    ],
)
def test_questions_of_their_own_after_an_intro_are_still_counted(row: int, count: int) -> None:
    # An intro line and a body sentence of real posts (StackEval lines 1 and 6) before
    # three questions with different subjects (row 205: StackEval lines 675, 279, 476;
    # row 204: CoNaLa 523, 1342, 832). Lines that ask on their own still count in a post.
    intro = "How do I print an integer in binary with leading zeros?"
    body = "Actually these warnings are almost always errors."
    message = f"{intro}\n{body}\n{joined(row)['message']}"
    questions, is_post = independent_questions(message)
    assert is_post
    assert len(questions) == count
    assert guard(message).case == "too_many"


def test_a_closing_thanks_line_makes_no_post() -> None:
    # joined.jsonl row 4 (CoNaLa 2270, 1788) with the closing line of StackEval line 83.
    closing = "Thanks for all the help."
    message = f"{joined(4)['message']}\n{closing}"
    assert independent_questions(message)[1] is False
    assert plan_by_rules(message) == (
        "multiple_questions",
        joined(4)["questions"],
        "rule: two independent questions",
    )


def test_a_statement_after_the_last_question_on_its_line_makes_a_post() -> None:
    # StackEval line 446: "Is there any crate? I have written code for snake game and I
    # want to run it …" — the body goes on after its last "?": one post, one question.
    assert independent_questions(post(446))[1]
    assert guard(post(446)).case == "single_topic"
