"""`eval grounding` and `eval grounding-set` on small, hand-made data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.agent.state import SearchResult
from codeweaver.cli.app import app
from codeweaver.evaluation.datasets import DatasetError
from codeweaver.evaluation.grounding_eval import (
    build_cases,
    evaluate_grounding,
    false_claim,
    insert_claim,
    load_cases,
    negate,
)

ROWS = [
    {
        "question": "How do I sort a list?",
        "answer": "Use sorted() to get a new sorted list. The list.sort() method sorts the "
        "list in place and returns None.",
    },
    {
        "question": "How do I read a file?",
        "answer": "Open the file with open() and iterate over the file object to read lines.",
    },
]


async def grounded(question: str, sources: list[SearchResult]) -> str:
    first = sources[0]["snippet"].split(". ")[0]
    return f"{first} [1]."


def test_false_claims_are_negated_or_foreign() -> None:
    assert (
        negate("The method returns None for lists.") == "The method never returns None for lists."
    )
    assert negate("It is fast enough for most uses.") == "It is not fast enough for most uses."
    foreign = false_claim(ROWS[0]["answer"], ROWS[1]["answer"], 0)
    assert "open()" in foreign
    negated = false_claim(ROWS[0]["answer"], ROWS[1]["answer"], 1)
    assert "never returns" in negated or "not" in negated
    assert insert_claim("First.\n\nSecond.", "Claim.") == "First. Claim [1].\n\nSecond."


async def test_build_then_evaluate_with_words_only(tmp_path: Path) -> None:
    built = await build_cases(ROWS, grounded)
    assert [c["supported"] for c in built] == [True, False, True, False]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in built))
    cases = load_cases(path)
    report = (await evaluate_grounding(cases, None)).to_dict()
    assert report["cases"] == 4 and report["citations_valid"] == 1.0
    assert report["flag_rate_supported"] == 0.0
    assert report["recall"] is not None and report["recall"] >= 0.5  # the foreign one at least
    assert report["model_calls_per_answer"] == 0.0


def test_bad_lines_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"question": "q", "answer": "a", "sources": ["s"]}\n'
        '{"question": "q", "answer": "a", "sources": []}\n'
    )
    with pytest.raises(DatasetError, match=":2:"):
        load_cases(path)
    result = CliRunner().invoke(app, ["eval", "grounding", "--file", str(path), "--judge", "words"])
    assert result.exit_code == 2 and ":2:" in result.stderr


def test_cli_reports_json(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"question": "How do I sort?", "sources": [ROWS[0]["answer"]],
         "answer": "The list.sort() method sorts the list in place [1].", "supported": True},
        {"question": "How do I sort?", "sources": [ROWS[0]["answer"]],
         "answer": "The requests library downloads web pages over HTTP [1].", "supported": 0},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(
        app, ["eval", "grounding", "--file", str(path), "--judge", "words", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["precision"] == 1.0 and report["recall"] == 1.0
    assert report["flag_rate_supported"] == 0.0
