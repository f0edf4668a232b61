"""`codeweaver_eval.builders.build_split_fixtures`: labels hold by construction and the draw
is seeded."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from codeweaver.words import refers_back, subject_terms
from codeweaver_eval.builders import build_split_fixtures as builder
from codeweaver_eval.datasets import expected_case, load_split_examples

ROOT = Path(__file__).parents[4]
SPLIT = ROOT / "tests" / "fixtures" / "split"
DATA = Path("/work/shared/data")
needs_data = pytest.mark.skipif(
    not (DATA / "intent" / "stackeval" / "stack-eval.jsonl").is_file(),
    reason="shared data sets not present",
)


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SPLIT / name).read_text(encoding="utf-8").splitlines()]


def test_fixtures_load_with_their_cases() -> None:
    singles = load_split_examples(SPLIT / "single_real.jsonl")
    assert len(singles) == 925
    assert {e.expected_case for e in singles} == {"single_topic"}
    cases = [e.expected_case for e in load_split_examples(SPLIT / "joined.jsonl")]
    assert (cases.count("multiple_questions"), cases.count("too_many")) == (300, 300)


def test_joined_labels_hold_by_construction() -> None:
    for number, row in enumerate(rows("joined.jsonl"), start=1):
        questions = row["questions"]
        assert row["case"] == expected_case(len(questions)), number
        for part, question in zip(row["parts"], questions, strict=True):
            # Joined inline, a question without end punctuation gets its "?".
            assert question in (part["text"], part["text"] + "?"), number
        for question in questions:
            assert question.lower() in row["message"].lower(), number
            assert not refers_back(question), number
        for first, second in combinations(questions, 2):
            # Disjoint for the script's own coarse stems, and so for the planner's terms.
            assert not builder.content_stems(first) & builder.content_stems(second), number
            assert not subject_terms(first) & subject_terms(second), number


def test_content_stems_meet_across_inflections() -> None:
    # StackEval lines 79 and 314: "row" and "rows" are one subject.
    first = "How to skip the first row when reading a csv file?"
    second = "How to replace certain values in a specific rows and columns with NA in R?"
    assert builder.content_stems(first) & builder.content_stems(second) == {"row"}
    # songys ids 3963 and 3951: "여자친구랑" and "여자친구가" are one subject.
    ko_first = "여자친구랑 피시방데이트도하고싶은데 어떻게 말을 할까?"
    ko_second = "여자친구가 클럽에서 춤만 춘다는데 진짜일까?"
    assert "여자" in builder.content_stems(ko_first) & builder.content_stems(ko_second)


@needs_data
def test_committed_fixtures_are_what_the_script_builds() -> None:
    built = builder.build(DATA, 12, 200, 100)
    assert built["single_real.jsonl"] == rows("single_real.jsonl")
    assert built["joined.jsonl"] == rows("joined.jsonl")


@needs_data
def test_the_draw_follows_the_seed() -> None:
    first = builder.build(DATA, 3, 10, 5)["joined.jsonl"]
    assert first == builder.build(DATA, 3, 10, 5)["joined.jsonl"]
    assert first != builder.build(DATA, 4, 10, 5)["joined.jsonl"]
    assert len(first) == 2 * 10 + 2 * 5


@needs_data
def test_single_rows_are_the_stackeval_posts_unchanged() -> None:
    source = (DATA / "intent" / "stackeval" / "stack-eval.jsonl").read_text(encoding="utf-8")
    posts = [json.loads(line) for line in source.splitlines()]
    for row in rows("single_real.jsonl"):
        original = posts[row["line"] - 1]
        assert (row["message"], row["id"]) == (original["question"], original["questionId"])
        assert row["questions"] == [row["message"]]


@needs_data
def test_joined_parts_come_from_their_source_line() -> None:
    source = (DATA / "intent" / "stackeval" / "stack-eval.jsonl").read_text(encoding="utf-8")
    titles = [
        json.loads(line)["question"].split("\n", 1)[0].strip() for line in source.splitlines()
    ]
    conala = json.loads((DATA / "retrieval" / "conala" / "conala-train.json").read_text())
    for row in rows("joined.jsonl"):
        for part in row["parts"]:
            kind, _, where = part["ref"].partition(" ")
            if part["source"] == "stackeval":
                assert titles[int(where) - 1] == part["text"]
            elif part["source"] == "conala":
                assert conala[int(where)]["intent"].strip() == part["text"]
            else:
                assert part["source"] == "korean_songys" and kind == "id"
