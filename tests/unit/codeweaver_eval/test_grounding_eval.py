"""`eval grounding` and `eval grounding-set` on small, hand-made data."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from codeweaver.agent.answering.grounding import check_grounding
from codeweaver.agent.state import SearchResult
from codeweaver.cli.app import app
from codeweaver_eval.builders import build_grounding_changed as changed
from codeweaver_eval.datasets import DatasetError
from codeweaver_eval.grounding_eval import (
    build_cases,
    evaluate_grounding,
    false_citation_removed,
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
    # The unrelated sentence is caught by removing its citation: nothing contradicts the
    # source, so nothing is flagged for a rewrite and there is no precision to report.
    assert report["recall"] == 1.0 and report["removed_rate_unsupported"] == 1.0
    assert report["flag_rate_unsupported"] == 0.0 and report["precision"] is None
    assert report["flag_rate_supported"] == 0.0 and report["citations_valid"] == 1.0


def _stackeval_file(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "stackeval.jsonl"
    lines = [ROWS[n % len(ROWS)] for n in range(rows)]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _grounding_set(tmp_path: Path, rows: int) -> tuple[Result, Path]:
    out = tmp_path / "cases.jsonl"
    stackeval = _stackeval_file(tmp_path, rows)
    command = ["eval", "grounding-set", "--stackeval", str(stackeval), "-o", str(out)]
    return CliRunner().invoke(app, command), out


def _model_failing_on_call(monkeypatch: pytest.MonkeyPatch, failing_call: int | None) -> None:
    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings
    from codeweaver.llm.scripted import ScriptedChatModel

    calls = 0

    def reply(messages: list[object]) -> str:
        nonlocal calls
        calls += 1
        if calls == failing_call:
            raise RuntimeError("the model ran out of memory")
        return "Use sorted() to get a new sorted list [1]."

    llm = ScriptedChatModel(script={"generate_answer": reply})
    deps = Deps(llm=llm, settings=Settings(), model_name="scripted:test")
    monkeypatch.setattr("codeweaver_eval.cli.grounding.model_deps", lambda _model: deps)


def test_grounding_set_shows_progress_and_writes_every_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _model_failing_on_call(monkeypatch, failing_call=None)
    result, out = _grounding_set(tmp_path, rows=3)
    assert result.exit_code == 0, result.output
    assert "evaluating: 3/3" in result.stderr  # a log gets plain progress lines
    assert f"wrote 6 cases to {out}" in result.stdout
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    assert [c["supported"] for c in cases] == [True, False] * 3


def test_an_interrupted_grounding_set_keeps_the_cases_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _model_failing_on_call(monkeypatch, failing_call=3)
    result, out = _grounding_set(tmp_path, rows=4)
    assert result.exit_code == 1
    assert "answering question 3 failed (the model ran out of memory)" in result.stderr
    assert f"the 4 cases made before it are in {out}" in result.stderr
    assert len(out.read_text().splitlines()) == 4
    assert isinstance(result.exception, SystemExit)  # a clear error, not a crash


FIXTURES = Path(__file__).parents[2] / "fixtures/grounding"


@pytest.mark.parametrize("name", ["stackeval50.jsonl", "stackeval_heldout.jsonl"])
async def test_the_labelled_sets_meet_the_grounding_targets(name: str) -> None:
    # The acceptance bar of the check on both sets, kept as a regression gate: words
    # only, no model. Flagged = a contradiction found (a rewrite, then a warning).
    cases = load_cases(FIXTURES / name)
    assert len(cases) == 100
    report = (await evaluate_grounding(cases, None)).to_dict()
    assert report["citations_valid"] == 1.0
    assert report["recall"] >= 0.85, report["examples"]
    assert report["flag_rate_supported"] <= 0.10, report["examples"]
    assert report["model_calls_per_answer"] == 0.0


async def test_only_the_false_claims_citation_counts_as_caught() -> None:
    # stackeval50 line 8: a supported sentence loses its citation too ("This can cause
    # VSCode to launch PowerShell…"), but the false one ("…removed in version 10.0") is
    # what makes the copy unsupported.
    case = load_cases(FIXTURES / "stackeval50.jsonl")[7]
    assert case.line == 8 and case.false_claim.startswith("This behaviour was removed")
    check = await check_grounding(None, case.question, case.answer, case.sources)
    assert len(check.removed) == 2
    assert false_citation_removed(check, case.false_claim)
    other = load_cases(FIXTURES / "stackeval50.jsonl")[1].false_claim  # line 2's
    assert not false_citation_removed(check, other)


# The breakdown by kind, with a stand-in for the check: what it flags or unbinds is set
# by the answer ("FLAG", "DROP"), so the counts depend on the report alone.
@dataclass
class _Claim:
    plain: str


@dataclass
class _Verdict:
    claim: _Claim


@dataclass
class _FakeCheck:
    passed: bool
    removed: list[_Verdict]
    unknown_citations: list[int] = field(default_factory=list)
    asked_model: bool = False

    def cleaned(self, answer: str, sources: int) -> str:
        return answer

    def to_dict(self) -> dict[str, Any]:
        return {"unsupported": []}


async def _fake_check(llm: object, question: str, answer: str, sources: object) -> _FakeCheck:
    dropped = answer.split("DROP ", 1)[1].split(" [1]")[0] if "DROP " in answer else ""
    return _FakeCheck("FLAG" not in answer, [_Verdict(_Claim(dropped))] if dropped else [])


KIND_CASES = [
    ("Sorting keeps equal items in order [1].", True, "supported", ""),
    ("FLAG Sorting keeps equal items in order [1].", True, "supported", ""),
    ("DROP sorted returns a new list [1].", True, "supported", ""),
    ("FLAG The sort takes 3 passes [1].", False, "number", "The sort takes 3 passes [1]."),
    ("The sort takes 5 passes [1].", False, "number", "The sort takes 5 passes [1]."),
    ("DROP list.sorted sorts in place [1].", False, "name", "list.sorted sorts in place [1]."),
    # A citation is removed, but not the false claim's: not caught.
    ("DROP sorted returns a new list [1]. It is not stable [1].", False, "negation",
     "It is not stable [1]."),
]  # fmt: skip


def _kind_cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "kinds.jsonl"
    rows = [
        {"question": "How do I sort?", "sources": [ROWS[0]["answer"]], "answer": answer,
         "supported": supported, "kind": kind, "false_claim": claim}
        for answer, supported, kind, claim in KIND_CASES
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


async def test_the_report_breaks_cases_down_by_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("codeweaver_eval.grounding_eval.check_grounding", _fake_check)
    report = (await evaluate_grounding(load_cases(_kind_cases_file(tmp_path)), None)).to_dict()
    assert report["supported_by_kind"] == {
        "supported": {"cases": 3, "touched": 2, "flagged": 1, "removed": 1, "rate": 2 / 3}
    }
    assert report["by_kind"] == {
        "name": {"cases": 1, "caught": 1, "flagged": 0, "removed": 1, "rate": 1.0},
        "negation": {"cases": 1, "caught": 0, "flagged": 0, "removed": 0, "rate": 0.0},
        "number": {"cases": 2, "caught": 1, "flagged": 1, "removed": 0, "rate": 0.5},
    }
    # The totals are the sums of the kinds.
    assert report["recall"] == 2 / 4 and report["flag_rate_supported"] == 1 / 3


def test_the_cli_prints_the_breakdown_by_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("codeweaver_eval.grounding_eval.check_grounding", _fake_check)
    command = ["eval", "grounding", "--file", str(_kind_cases_file(tmp_path)), "--judge", "words"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "supported touched, supported: 2/3 (67%; flagged 1, citation removed 1)" in result.stdout
    assert "caught, number: 1/2 (50%; flagged 1, citation removed 0)" in result.stdout
    assert "caught, negation: 0/1 (0%; flagged 0, citation removed 0)" in result.stdout
    as_json = json.loads(CliRunner().invoke(app, [*command, "--json"]).stdout)
    assert as_json["by_kind"]["name"]["caught"] == 1
    assert as_json["supported_by_kind"]["supported"]["touched"] == 2


# The held-out set of changed facts (`build_grounding_changed`): its shape, not the
# check's results on it, which are measured, not gated.
CHANGED = FIXTURES / "stackeval_changed.jsonl"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_changed_set_has_each_kind_and_one_change_per_pair() -> None:
    cases = _rows(CHANGED)
    kinds = Counter(case["kind"] for case in cases)
    assert kinds == {"supported": 78, "name": 21, "negation": 21, "number": 18, "version": 18}
    others = _rows(FIXTURES / "stackeval_heldout.jsonl") + _rows(FIXTURES / "stackeval50.jsonl")
    assert not {c["question"] for c in cases} & {c["question"] for c in others}
    for good, bad in zip(cases[::2], cases[1::2], strict=True):
        assert good["supported"] is True and bad["supported"] is False
        assert good["question_id"] == bad["question_id"] and good["sources"] == bad["sources"]
        assert bad["stackeval_line"] % 2 == 1  # an even 0-based position
        assert bad["original"] in good["answer"] and bad["false_claim"] not in good["answer"]
        assert good["answer"].replace(bad["original"], bad["false_claim"], 1) == bad["answer"]
        assert bad["change"]["from"] in bad["source_sentence"]
        assert bad["source_sentence"] in " ".join(bad["sources"][0]["text"].split())


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_the_changed_set_is_what_its_builder_writes(tmp_path: Path) -> None:
    out = tmp_path / "changed.jsonl"
    exclude = [arg for name in ("stackeval50", "stackeval_heldout")
               for arg in ("--exclude", str(FIXTURES / f"{name}.jsonl"))]  # fmt: skip
    assert changed.main(["--stackeval", str(STACKEVAL), *exclude, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == CHANGED.read_text(encoding="utf-8")


def test_the_changed_set_builder_refuses_odd_positions_and_used_questions() -> None:
    rows = [{"questionId": "even"}, {"questionId": "odd"}]
    fact = changed.Fact("odd", "number", "It takes 3 passes.", "3", "5")
    with pytest.raises(changed.BuildError, match="odd position"):
        changed.build(rows, set(), 1, [fact])
    fact = changed.Fact("even", "number", "It takes 3 passes.", "3", "5")
    with pytest.raises(changed.BuildError, match="already used"):
        changed.build(rows, {"even"}, 1, [fact])
