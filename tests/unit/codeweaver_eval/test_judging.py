"""Judging answers blind: what gives a system away is removed, the A/B order is seeded,
the key unblinds it, the judge's file is counted per system and checked line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver_eval.datasets import DatasetError
from codeweaver_eval.judging import (
    RUBRIC,
    Side,
    make_blind,
    read_judged,
    read_key,
    sides_of,
    strip_giveaways,
    tally,
    write_blind,
)
from tests.unit.codeweaver_eval.stackeval import C_ATOI, FILE, PYTHON_RANGE, ROWS, RUST_BINARY

DOCS = Path(__file__).parents[3] / "docs" / "measurements.md"
KOREAN = Path(__file__).parents[2] / "fixtures" / "korean" / "stackeval_ko20.jsonl"

PIPELINE_ANSWER = (
    "_Answered from general knowledge: no source was found._\n\n"
    'Use `format!("{:016b}", n)` [1] to pad with zeros [2].\n\n'
    "> ⚠ Warning: a claim could not be checked.\n\n"
    "Sources:\n[1] https://doc.rust-lang.org/std/fmt/\n[2] stackoverflow:q44690439"
)


def _row(ident: str, question: str, **answers: str) -> dict[str, Any]:
    systems = {name: {"answer": text, "recall": 0.5} for name, text in answers.items()}
    return {"id": ident, "question": question, "first": "pipeline", "systems": systems}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _rows(path: Path, prefix: str = "") -> Path:
    """One `eval answers --out` row per question of the StackEval fixture."""
    return _write(
        path,
        [
            _row(r["questionId"], r["question"], pipeline=f"{prefix}pipe {n}", bare=f"bare {n}")
            for n, r in enumerate(ROWS)
        ],
    )


def _both(tmp_path: Path) -> tuple[Side, Side]:
    return sides_of(_rows(tmp_path / "rows.jsonl"), ("pipeline", "bare"))


# --------------------------------------------------------------------------- stripping


def test_the_notice_sources_warnings_and_marks_are_removed() -> None:
    assert strip_giveaways(PIPELINE_ANSWER) == ('Use `format!("{:016b}", n)` to pad with zeros.')


def test_a_korean_sources_list_and_warning_are_removed() -> None:
    answer = "`sorted(d, key=d.get)`를 쓰세요 [1].\n\n> 경고: 확인되지 않음\n\n출처:\n[1] docs"
    assert strip_giveaways(answer) == "`sorted(d, key=d.get)`를 쓰세요."


def test_what_gives_nothing_away_is_kept() -> None:
    answer = "Index with `a[0]`; _emphasis_ mid-text stays.\n\n> a quoted line stays"
    assert strip_giveaways(answer) == answer
    block = "Read it [1]:\n\n```python\nname = sys.argv[1]\nrows[0] = 2\n```\n"
    assert strip_giveaways(block) == "Read it:\n\n```python\nname = sys.argv[1]\nrows[0] = 2\n```"
    assert strip_giveaways("") == "(no answer)"
    assert strip_giveaways(None) == "(no answer)"


# --------------------------------------------------------------------------- blind


def test_each_item_holds_the_question_the_reference_and_both_answers(tmp_path: Path) -> None:
    rows = _write(
        tmp_path / "rows.jsonl",
        [_row(RUST_BINARY, ROWS[0]["question"], pipeline=PIPELINE_ANSWER, bare="Use {:b}.")],
    )
    blinded = make_blind(sides_of(rows, ("pipeline", "bare")), FILE, seed=0)
    [item] = blinded.items
    assert set(item) == {"id", "question", "reference_answer", "answer_A", "answer_B"}
    assert item["id"] == RUST_BINARY
    assert item["reference_answer"] == ROWS[0]["answer"]
    assert {item["answer_A"], item["answer_B"]} == {
        'Use `format!("{:016b}", n)` to pad with zeros.',
        "Use {:b}.",
    }


def test_the_order_is_the_same_for_a_seed_and_differs_between_seeds(tmp_path: Path) -> None:
    sides = _both(tmp_path)
    orders = {
        seed: [o["A"] for o in make_blind(sides, FILE, seed=seed).key["items"].values()]
        for seed in range(8)
    }
    again = [o["A"] for o in make_blind(sides, FILE, seed=3).key["items"].values()]
    assert again == orders[3]
    assert len({tuple(order) for order in orders.values()}) > 1
    assert all(set(order) <= {"pipeline", "bare"} for order in orders.values())


def test_the_key_names_the_system_behind_each_side(tmp_path: Path) -> None:
    sides = _both(tmp_path)
    blinded = make_blind(sides, FILE, seed=5)
    assert blinded.key["seed"] == 5
    assert blinded.key["sides"]["bare"] == {
        "run": 1,
        "rows": str(tmp_path / "rows.jsonl"),
        "system": "bare",
    }
    for n, item in enumerate(blinded.items):
        order = blinded.key["items"][item["id"]]
        assert item["id"] == ROWS[n]["questionId"]
        assert item["answer_A"] == ("pipe" if order["A"] == "pipeline" else "bare") + f" {n}"
        assert item["answer_B"] == ("pipe" if order["B"] == "pipeline" else "bare") + f" {n}"


def test_two_runs_of_the_same_questions_are_compared_and_the_key_names_the_run(
    tmp_path: Path,
) -> None:
    one, two = _rows(tmp_path / "one.jsonl"), _rows(tmp_path / "two.jsonl", prefix="new ")
    sides = sides_of(one, ("pipeline", "pipeline"), against=two)
    blinded = make_blind(sides, FILE, seed=1)
    assert blinded.key["sides"] == {
        "run1:pipeline": {"run": 1, "rows": str(one), "system": "pipeline"},
        "run2:pipeline": {"run": 2, "rows": str(two), "system": "pipeline"},
    }
    for n, item in enumerate(blinded.items):
        by_side = {blinded.key["items"][item["id"]][s]: item[f"answer_{s}"] for s in "AB"}
        assert by_side == {"run1:pipeline": f"pipe {n}", "run2:pipeline": f"new pipe {n}"}


def test_runs_that_asked_other_questions_are_refused(tmp_path: Path) -> None:
    one = _rows(tmp_path / "one.jsonl")
    two = _write(tmp_path / "two.jsonl", [_row(RUST_BINARY, ROWS[0]["question"], pipeline="x")])
    with pytest.raises(DatasetError, match="is not there"):
        make_blind(sides_of(one, ("pipeline", "pipeline"), two), FILE)


def test_the_same_system_twice_needs_a_second_run(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "rows.jsonl")
    with pytest.raises(ValueError, match="--against"):
        sides_of(rows, ("pipeline", "pipeline"))
    with pytest.raises(ValueError, match="same rows file"):
        sides_of(rows, ("pipeline", "pipeline"), rows)


def test_a_question_asked_by_its_title_finds_its_reference_by_the_first_line(
    tmp_path: Path,
) -> None:
    title = ROWS[1]["question"].strip().splitlines()[0]
    rows = _write(tmp_path / "rows.jsonl", [_row("line-7", title, pipeline="p", bare="b")])
    [item] = make_blind(sides_of(rows, ("pipeline", "bare")), FILE).items
    assert item["id"] == "line-7"
    assert item["reference_answer"] == ROWS[1]["answer"]


def test_a_translated_question_finds_its_reference_by_id(tmp_path: Path) -> None:
    korean = "파이썬에서 range 객체가 빠른 이유는 무엇인가요?"
    rows = _write(tmp_path / "rows.jsonl", [_row(PYTHON_RANGE, korean, pipeline="p", bare="b")])
    [item] = make_blind(sides_of(rows, ("pipeline", "bare")), FILE).items
    assert item["question"] == korean
    assert item["reference_answer"] == ROWS[2]["answer"]


def test_the_korean_file_holds_its_own_references(tmp_path: Path) -> None:
    first = json.loads(KOREAN.read_text(encoding="utf-8").splitlines()[0])
    rows = _write(
        tmp_path / "rows.jsonl",
        [_row(first["questionId"], first["question"], pipeline="p", bare="b")],
    )
    [item] = make_blind(sides_of(rows, ("pipeline", "bare")), KOREAN).items
    assert item["reference_answer"] == first["answer"]


def test_questions_sharing_a_title_are_told_apart_by_id(tmp_path: Path) -> None:
    data = _write(
        tmp_path / "data.jsonl",
        [
            {"questionId": "q1", "question": "Sort a dict\nby key?", "answer": "sorted(d)"},
            {"questionId": "q2", "question": "Sort a dict\nby value?", "answer": "d.get"},
        ],
    )
    rows = _write(
        tmp_path / "rows.jsonl", [_row("q2", "Sort a dict\nby value?", pipeline="p", bare="b")]
    )
    [item] = make_blind(sides_of(rows, ("pipeline", "bare")), data).items
    assert item["reference_answer"] == "d.get"


def test_a_conala_reference_is_the_snippet(tmp_path: Path) -> None:
    data = tmp_path / "conala.json"
    intent = "Divide the values of two dictionaries in python"
    data.write_text(
        json.dumps(
            [{"intent": intent, "snippet": "{k: d2[k] / d1[k] for k in d1}", "question_id": 1}]
        ),
        encoding="utf-8",
    )
    rows = _write(tmp_path / "rows.jsonl", [_row("1:0", intent, pipeline="p", bare="b")])
    [item] = make_blind(sides_of(rows, ("pipeline", "bare")), data).items
    assert item["reference_answer"] == "{k: d2[k] / d1[k] for k in d1}"


def test_a_question_without_a_reference_is_an_error_naming_its_line(tmp_path: Path) -> None:
    rows = _write(
        tmp_path / "rows.jsonl",
        [
            _row(C_ATOI, ROWS[1]["question"], pipeline="p", bare="b"),
            _row("nowhere", "A question of another set", pipeline="p", bare="b"),
        ],
    )
    with pytest.raises(DatasetError, match=r"rows\.jsonl:2: no reference .* for question nowhere"):
        make_blind(sides_of(rows, ("pipeline", "bare")), FILE)


def test_a_row_without_the_named_system_is_an_error_naming_its_line(tmp_path: Path) -> None:
    rows = _write(
        tmp_path / "rows.jsonl",
        [
            _row(RUST_BINARY, ROWS[0]["question"], pipeline="p", bare="b"),
            _row(C_ATOI, ROWS[1]["question"], pipeline="p"),
        ],
    )
    with pytest.raises(DatasetError, match=r":2: row .* has no system 'bare' \(it has: pipeline\)"):
        make_blind(sides_of(rows, ("pipeline", "bare")), FILE)


def test_missing_files_are_errors(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "rows.jsonl")
    with pytest.raises(DatasetError, match="no such file"):
        make_blind(sides_of(tmp_path / "none.jsonl", ("pipeline", "bare")), FILE)
    with pytest.raises(DatasetError, match="no such file"):
        make_blind(sides_of(rows, ("pipeline", "bare")), tmp_path / "none.jsonl")


# --------------------------------------------------------------------------- unblind


def _key(tmp_path: Path) -> Path:
    """A key of two items: item 1 has the pipeline as A, item 2 has it as B."""
    key = tmp_path / "key.json"
    sides = {
        "pipeline": {"rows": "r", "system": "pipeline"},
        "bare": {"rows": "r", "system": "bare"},
    }
    items = {"1": {"A": "pipeline", "B": "bare"}, "2": {"A": "bare", "B": "pipeline"}}
    key.write_text(json.dumps({"seed": 9, "sides": sides, "items": items}), encoding="utf-8")
    return key


JUDGED: list[dict[str, Any]] = [
    {"id": "1", "A": "acceptable", "B": "unacceptable", "preference": "A", "why": "B invents."},
    {"id": 2, "A": "partial", "B": "acceptable", "preference": "B", "why": "A is vague."},
]


def test_verdicts_and_preferences_are_counted_for_the_system_behind_each_side(
    tmp_path: Path,
) -> None:
    judge = _write(tmp_path / "judge.jsonl", JUDGED)
    result = tally(read_judged(judge), read_key(_key(tmp_path)), judge)
    assert result.n == 2
    assert result.verdicts == {
        "pipeline": {"acceptable": 2, "partial": 0, "unacceptable": 0},
        "bare": {"acceptable": 0, "partial": 1, "unacceptable": 1},
    }
    assert result.preference == {"pipeline": 2, "bare": 0, "tie": 0}
    assert result.acceptable_share == {"pipeline": 1.0, "bare": 0.0}
    assert result.not_acceptable == [
        {"id": "1", "system": "bare", "verdict": "unacceptable", "why": "B invents."},
        {"id": "2", "system": "bare", "verdict": "partial", "why": "A is vague."},
    ]
    assert result.to_dict()["seed"] == 9


def test_a_tie_is_counted_apart(tmp_path: Path) -> None:
    line = {"id": "1", "A": "partial", "B": "partial", "preference": "tie", "why": "Both vague."}
    judge = _write(tmp_path / "judge.jsonl", [line])
    result = tally(read_judged(judge), read_key(_key(tmp_path)), judge)
    assert result.preference == {"pipeline": 0, "bare": 0, "tie": 1}
    assert result.to_dict()["items_in_key"] == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"A": "good"}, "`A` must be one of acceptable, partial, unacceptable"),
        ({"B": None}, "`B` must be one of"),
        ({"preference": "pipeline"}, "`preference` must be A, B or tie"),
        ({"why": " "}, "needs a `why`"),
        ({"id": None}, "needs an `id`"),
    ],
)
def test_a_bad_judge_line_is_named(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    judge = _write(tmp_path / "judge.jsonl", [JUDGED[0], {**JUDGED[1], **change}])
    with pytest.raises(DatasetError, match=rf"judge\.jsonl:2: {message}"):
        read_judged(judge)


def test_an_item_unknown_to_the_key_or_judged_twice_is_named(tmp_path: Path) -> None:
    key = read_key(_key(tmp_path))
    unknown = _write(tmp_path / "unknown.jsonl", [{**JUDGED[0], "id": "7"}])
    with pytest.raises(DatasetError, match=r"unknown\.jsonl:1: item 7 is not in the key"):
        tally(read_judged(unknown), key, unknown)
    twice = _write(tmp_path / "twice.jsonl", [JUDGED[0], JUDGED[0]])
    with pytest.raises(DatasetError, match=r"twice\.jsonl:2: item 1 is judged twice"):
        tally(read_judged(twice), key, twice)


def test_a_file_that_is_not_a_key_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"1": "A=bare"}), encoding="utf-8")
    with pytest.raises(DatasetError, match="not a key of `codeweaver eval blind`"):
        read_key(old)
    with pytest.raises(DatasetError, match="no such file"):
        read_key(tmp_path / "none.json")


def test_a_written_blind_file_and_key_unblind_together(tmp_path: Path) -> None:
    blinded = make_blind(_both(tmp_path), FILE, seed=2)
    out, key = tmp_path / "blind.jsonl", tmp_path / "key.json"
    write_blind(blinded, out, key)
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    lines = [
        {"id": i["id"], "A": "acceptable", "B": "partial", "preference": "A", "why": "."}
        for i in items
    ]
    judge = _write(tmp_path / "judge.jsonl", lines)
    result = tally(read_judged(judge), read_key(key), judge)
    firsts = [blinded.key["items"][i["id"]]["A"] for i in items]
    assert result.verdicts["pipeline"]["acceptable"] == firsts.count("pipeline")
    assert result.verdicts["bare"]["acceptable"] == firsts.count("bare")
    assert result.preference["pipeline"] == firsts.count("pipeline")


# --------------------------------------------------------------------------- commands


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("env")
def test_the_commands_blind_then_unblind(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "rows.jsonl")
    runner = CliRunner()
    made = runner.invoke(
        app, ["eval", "blind", str(rows), str(FILE), "--out", "b.jsonl", "--key", "k.json"]
    )
    assert made.exit_code == 0, made.output
    assert made.stdout.startswith("5 items: pipeline and bare (seed 3)")
    ids = [json.loads(line)["id"] for line in Path("b.jsonl").read_text("utf-8").splitlines()]
    lines = [
        {"id": i, "A": "unacceptable", "B": "acceptable", "preference": "B", "why": f"why {i}"}
        for i in ids
    ]
    _write(tmp_path / "j.jsonl", lines)
    shown = runner.invoke(app, ["eval", "unblind", "j.jsonl", "k.json"])
    assert shown.exit_code == 0, shown.output
    assert "N = 5 of 5 items, seed 3" in shown.stdout
    assert "not acceptable:" in shown.stdout
    assert "fewer than 20 items judged" in shown.stdout
    assert f"{ids[0]}  " in shown.stdout and f"unacceptable: why {ids[0]}" in shown.stdout
    counted = runner.invoke(app, ["eval", "unblind", "j.jsonl", "k.json", "--json"])
    report = json.loads(counted.stdout)
    assert report["n"] == 5 and len(report["not_acceptable"]) == 5
    assert sum(report["preference"].values()) == 5


def _blind(rows: str, data: Path, *extra: str) -> list[str]:
    return ["eval", "blind", rows, str(data), "--out", "b", "--key", "k", *extra]


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (_blind("none.jsonl", FILE), "no such file"),
        (_blind("rows.jsonl", FILE, "--systems", "pipeline,x"), "has no system 'x'"),
        (_blind("rows.jsonl", FILE, "--systems", "pipeline"), "two names"),
        (_blind("rows.jsonl", KOREAN), "no reference"),
        (_blind("rows.jsonl", FILE, "--key", "rows.jsonl"), "two new files"),
        (["eval", "unblind", "none.jsonl", "k.json"], "no such file"),
    ],
)
def test_the_commands_exit_2_with_a_clear_error(
    tmp_path: Path, args: list[str], message: str
) -> None:
    _rows(tmp_path / "rows.jsonl")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.usefixtures("env")
def test_the_rubric_is_printed_word_for_word_and_quoted_in_the_docs() -> None:
    result = CliRunner().invoke(app, ["eval", "rubric"])
    assert result.exit_code == 0
    assert result.stdout == RUBRIC
    assert RUBRIC in DOCS.read_text(encoding="utf-8")
