"""Evaluation library: datasets, metrics, split matching and the runners."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from codeweaver_eval.datasets import (
    INTENT_LABELS,
    PLAN_CASES,
    DatasetError,
    IntentExample,
    SplitExample,
    expected_case,
    intent_for_stackeval_type,
    load_intent_examples,
    load_split_examples,
)
from codeweaver_eval.metrics import (
    classification_report,
    jaccard_match,
    normalize_for_scoring,
    questions_match,
    token_jaccard,
)
from codeweaver_eval.runners import ERROR_LABEL, evaluate_intent, evaluate_split

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
STACKEVAL = Path("/work/shared/data/intent/stackeval/stack-eval.jsonl")

D, L, C = "debugging", "learning", "code_review"


def write(tmp_path: Path, text: str, name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*rows: object) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


# --- datasets --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source_type", "intent"),
    [
        ("debugging", D),
        ("implementation", L),
        ("conceptual", L),
        ("optimization", L),
        ("  Debugging ", D),
        ("code-golf", None),
    ],
)
def test_stackeval_type_mapping(source_type: str, intent: str | None) -> None:
    assert intent_for_stackeval_type(source_type) == intent


def test_load_stackeval_lines_and_direct_intent_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        jsonl(
            {"question": "Why does it crash?", "questionMetadata": {"type": "debugging"}},
            {"question": "What is a monad?", "metadata": {"type": "conceptual"}},
        )
        + "\n   \n"
        + jsonl({"question": "Review my diff", "intent": "code_review"}),
    )
    examples = load_intent_examples(path)
    assert examples == [
        IntentExample(1, "Why does it crash?", D, "debugging"),
        IntentExample(2, "What is a monad?", L, "conceptual"),
        # Two blank lines skipped; the line number still counts them.
        IntentExample(5, "Review my diff", C, None),
    ]


def test_limit_stops_early_and_ignores_later_bad_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        jsonl({"question": "a", "intent": D}, {"question": "b", "intent": L}) + "{broken\n",
    )
    assert [e.question for e in load_intent_examples(path, limit=2)] == ["a", "b"]
    with pytest.raises(DatasetError):
        load_intent_examples(path, limit=3)
    with pytest.raises(ValueError, match="limit"):
        load_intent_examples(path, limit=0)


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, jsonl({"question": "ok", "intent": D}) + "\n" + '{"question": "x",\n')
    with pytest.raises(DatasetError) as info:
        load_intent_examples(path)
    assert info.value.line == 3
    assert f"{path}:3" in str(info.value)
    assert "malformed JSON" in str(info.value)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"intent": D}, "missing field 'question'"),
        ({"question": "   ", "intent": D}, "non-empty string"),
        ({"question": 42, "intent": D}, "non-empty string"),
        ({"question": "q"}, "missing field 'intent'"),
        ({"question": "q", "intent": "chitchat"}, "must be one of"),
        ({"question": "q", "questionMetadata": {"type": "trivia"}}, "unknown StackEval type"),
    ],
)
def test_bad_intent_rows_are_reported_with_line(
    tmp_path: Path, row: dict[str, object], message: str
) -> None:
    path = write(tmp_path, jsonl({"question": "fine", "intent": L}, row))
    with pytest.raises(DatasetError, match=message) as info:
        load_intent_examples(path)
    assert info.value.line == 2


def test_non_object_line_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, '["question", "intent"]\n')
    with pytest.raises(DatasetError, match="expected a JSON object, got list") as info:
        load_intent_examples(path)
    assert info.value.line == 1


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    with pytest.raises(DatasetError, match="empty file"):
        load_split_examples(write(tmp_path, content))


def test_binary_and_non_utf8_files(tmp_path: Path) -> None:
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"GGUF\x00\x01\x02\x03")
    with pytest.raises(DatasetError, match="binary") as info:
        load_intent_examples(binary)
    assert info.value.line == 1

    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(
        jsonl({"question": "ok", "intent": D}).encode() + b'{"question": "caf\xe9"}\n'
    )
    with pytest.raises(DatasetError, match="not UTF-8") as info:
        load_intent_examples(latin1)
    assert info.value.line == 2


def test_missing_path_and_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(DatasetError, match="no such file") as info:
        load_intent_examples(missing)
    assert info.value.path == str(missing)
    with pytest.raises(DatasetError, match="not a regular file"):
        load_split_examples(tmp_path)


def test_utf8_bom_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl({"message": "m?", "questions": ["m?"]}).encode())
    assert load_split_examples(path)[0].message == "m?"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"questions": ["a?"]}, "missing field 'message'"),
        ({"message": "a?"}, "'questions' must be a non-empty list"),
        ({"message": "a?", "questions": []}, "'questions' must be a non-empty list"),
        ({"message": "a?", "questions": ["a?", ""]}, "non-empty strings"),
    ],
)
def test_bad_split_rows(tmp_path: Path, row: dict[str, object], message: str) -> None:
    with pytest.raises(DatasetError, match=message) as info:
        load_split_examples(write(tmp_path, jsonl(row)))
    assert info.value.line == 1


@pytest.mark.parametrize(
    ("n", "case"),
    [(1, "single_topic"), (2, "multiple_questions"), (3, "too_many"), (7, "too_many")],
)
def test_expected_case(n: int, case: str) -> None:
    assert expected_case(n) == case


def test_expected_case_rejects_zero() -> None:
    with pytest.raises(ValueError):
        expected_case(0)


def test_split_fixture_loads_with_all_three_cases() -> None:
    examples = load_split_examples(FIXTURES / "split_sample.jsonl")
    assert len(examples) == 13
    cases = [e.expected_case for e in examples]
    assert (cases.count("single_topic"), cases.count("multiple_questions")) == (6, 4)
    assert cases.count("too_many") == 3
    assert any(any("\uac00" <= ch <= "\ud7a3" for ch in e.message) for e in examples)


@pytest.mark.skipif(not STACKEVAL.is_file(), reason="shared StackEval copy not present")
def test_real_stackeval_file_maps_to_documented_counts() -> None:
    examples = load_intent_examples(STACKEVAL)
    # data/PROVENANCE.md: debugging 395; implementation 368 + conceptual 131 + optimization 31.
    assert len(examples) == 925
    assert sum(e.intent == D for e in examples) == 395
    assert sum(e.intent == L for e in examples) == 368 + 131 + 31
    assert len(load_intent_examples(STACKEVAL, limit=10)) == 10


# --- metrics ---------------------------------------------------------------------------


def test_classification_report_by_hand() -> None:
    expected = [D, D, D, L, L, C]
    predicted = [D, D, L, L, D, L]
    # Confusion (rows expected, cols predicted; order D, L, C):
    #   D: [2, 1, 0]   L: [1, 1, 0]   C: [0, 1, 0]
    # accuracy = 3 / 6
    # debugging:   TP 2, predicted 3, support 3 -> P 2/3, R 2/3, F1 2/3
    # learning:    TP 1, predicted 3, support 2 -> P 1/3, R 1/2, F1 2*(1/6)/(5/6) = 2/5
    # code_review: TP 0, predicted 0, support 1 -> P 0 (undefined), R 0, F1 0
    # macro F1 = (2/3 + 2/5 + 0) / 3 = 16/45
    report = classification_report(expected, predicted, INTENT_LABELS)
    assert (report.total, report.correct) == (6, 3)
    assert report.accuracy == pytest.approx(0.5)
    d, lr, c = (report.for_label(x) for x in (D, L, C))
    assert (d.precision, d.recall, d.f1, d.support) == pytest.approx((2 / 3, 2 / 3, 2 / 3, 3))
    assert (lr.precision, lr.recall, lr.f1, lr.support) == pytest.approx((1 / 3, 1 / 2, 0.4, 2))
    assert (c.precision, c.recall, c.f1, c.support, c.predicted) == (0.0, 0.0, 0.0, 1, 0)
    assert report.macro_f1 == pytest.approx(16 / 45)
    assert report.macro_precision == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    assert report.confusion.labels == (D, L, C)
    assert report.confusion.matrix == ((2, 1, 0), (1, 1, 0), (0, 1, 0))


def test_unseen_predicted_label_only_widens_the_confusion_matrix() -> None:
    # learning: TP 1, predicted 1, support 2 -> P 1, R 1/2; the "error" row/column is added
    # but "error" (no support) is not a class; code_review (declared, support 0) is listed
    # and kept out of the macro average, which is over debugging and learning only.
    report = classification_report([D, L, L], [D, L, ERROR_LABEL], INTENT_LABELS)
    assert [m.label for m in report.per_class] == [D, L, C]
    assert report.confusion.labels == (D, L, C, ERROR_LABEL)
    assert report.confusion.count(L, ERROR_LABEL) == 1
    assert report.for_label(L).recall == pytest.approx(0.5)
    assert report.macro_recall == pytest.approx((1 + 0.5) / 2)
    with pytest.raises(KeyError):
        report.for_label(ERROR_LABEL)


def test_classification_report_edge_cases() -> None:
    empty = classification_report([], [], INTENT_LABELS)
    assert (empty.total, empty.accuracy, empty.macro_f1) == (0, 0.0, 0.0)
    with pytest.raises(ValueError, match="length"):
        classification_report([D], [], INTENT_LABELS)


def test_report_to_dict_is_json() -> None:
    data = classification_report([D, L], [D, D], INTENT_LABELS).to_dict()
    assert json.loads(json.dumps(data))["per_class"][D]["precision"] == pytest.approx(0.5)
    assert data["confusion"]["matrix"][1] == [1, 0, 0]


# --- split matching --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("  What IS   JWT? ", "what is jwt"),
        ("JWT가 뭐야？", "jwt가 뭐야"),
        ("Why?!..", "why"),
        ("how\tdo I\n fix it.", "how do i fix it"),
    ],
)
def test_normalize_for_scoring(raw: str, normalised: str) -> None:
    assert normalize_for_scoring(raw) == normalised


def test_token_jaccard_by_hand() -> None:
    # {how, do, i, undo, a, commit} vs {how, do, i, revert, a, commit}: 5 shared / 7 total
    assert token_jaccard("How do I undo a commit?", "how do I revert a commit") == pytest.approx(
        5 / 7
    )
    # {what, is, jwt} vs {what, is, cors}: 2 / 4 = 0.5 < 0.6
    assert token_jaccard("What is JWT?", "What is CORS?") == pytest.approx(0.5)
    assert not jaccard_match("What is JWT?", "What is CORS?")
    assert jaccard_match("How do I undo a commit?", "how do I revert a commit")
    # Edge punctuation on inner tokens is ignored: "python," == "python".
    assert token_jaccard("In Python, how?", "in python how") == pytest.approx(1.0)


def test_questions_match_reordered_and_reworded() -> None:
    expected = ["JWT가 뭐야?", "CORS 에러는 어떻게 해결해?"]
    assert questions_match(expected, ["cors 에러는 어떻게 해결해", "JWT가 뭐야？"])
    assert questions_match(
        ["How do I undo a commit?", "What is a rebase?"],
        ["what is a rebase", "How do I revert a commit?"],
    )
    assert not questions_match(expected, ["JWT가 뭐야?"])
    assert not questions_match(expected, ["JWT가 뭐야?", "도커 볼륨이 뭐야?"])
    # One-to-one: "what is jwt" (Jaccard 3/5 with the second) may not count for both.
    jwt = ["What is JWT?", "What is JWT used for?"]
    assert not questions_match(jwt, ["What is JWT?", "How do I install Docker?"])
    # "what is jwt for" fits both (3/4, 4/5), "what is a jwt" only the first (3/4; 3/6 = 0.5):
    # the first expected question must give up its greedy pick for the second to match.
    assert questions_match(jwt, ["What is JWT for?", "What is a JWT?"])


# --- runners ---------------------------------------------------------------------------


async def test_evaluate_intent_by_hand() -> None:
    rows: list[tuple[str, str, tuple[str, bool] | Exception]] = [
        ("q1", D, (D, False)),
        ("q2", D, (D, True)),
        ("q3", D, (L, False)),
        ("q4", L, (L, True)),
        ("q5", L, (D, False)),
        ("q6", C, (L, True)),
        ("q7", L, RuntimeError("model crashed")),
    ]
    examples = [IntentExample(i, q, gold) for i, (q, gold, _) in enumerate(rows, start=1)]
    answers: dict[str, tuple[str, bool] | Exception] = {q: a for q, _, a in rows}

    async def classify(question: str) -> tuple[str, bool]:
        answer = answers[question]
        if isinstance(answer, Exception):
            raise answer
        return answer

    progress: list[tuple[int, int]] = []
    report = await evaluate_intent(
        examples, classify, on_progress=lambda done, total: progress.append((done, total))
    )
    # Same six predictions as test_classification_report_by_hand, plus q7 (learning) -> error:
    # learning support 3 now, TP 1 -> R 1/3; accuracy 3/7.
    assert report.metrics.accuracy == pytest.approx(3 / 7)
    assert report.metrics.for_label(L).recall == pytest.approx(1 / 3)
    assert report.metrics.for_label(D).precision == pytest.approx(2 / 3)
    assert report.metrics.confusion.count(L, ERROR_LABEL) == 1
    assert report.errors == 1
    assert report.predictions[6].error == "RuntimeError: model crashed"
    # Fallbacks: q2 (D), q4 (L), q6 (L).
    assert report.fallbacks == 3
    assert dict(report.fallbacks_by_predicted) == {D: 1, L: 2}
    assert progress == [(i, 7) for i in range(1, 8)]

    data = json.loads(json.dumps(report.to_dict(include_predictions=True)))
    assert data["fallbacks"] == 3
    assert data["fallback_rate"] == pytest.approx(3 / 7)
    assert data["errors"] == 1
    assert data["accuracy"] == pytest.approx(3 / 7)
    assert [p["predicted"] for p in data["predictions"]] == [D, D, L, L, D, L, ERROR_LABEL]
    assert "predictions" not in report.to_dict()


async def test_evaluate_intent_survives_malformed_return() -> None:
    async def classify(question: str) -> tuple[str, bool]:
        return None  # type: ignore[return-value]

    report = await evaluate_intent([IntentExample(1, "q", D)], classify)
    assert report.errors == 1
    assert report.predictions[0].predicted == ERROR_LABEL


async def test_evaluate_intent_concurrency_is_bounded_and_order_kept() -> None:
    in_flight = 0
    peak = 0

    async def classify(question: str) -> tuple[str, bool]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        # Later questions finish first, so completion order differs from input order.
        await asyncio.sleep(0.001 * (10 - int(question)))
        in_flight -= 1
        return (D if int(question) % 2 else L), False

    examples = [IntentExample(i, str(i), D) for i in range(10)]
    report = await evaluate_intent(examples, classify, concurrency=3)
    assert peak == 3
    assert [p.line for p in report.predictions] == list(range(10))
    assert [p.predicted for p in report.predictions] == [L, D] * 5
    with pytest.raises(ValueError, match="concurrency"):
        await evaluate_intent(examples, classify, concurrency=0)


async def test_evaluate_split_by_hand() -> None:
    examples = [
        SplitExample(1, "m1", ("How do I reverse a list?",)),
        SplitExample(2, "m2", ("JWT가 뭐야?", "CORS 에러는 어떻게 해결해?")),
        SplitExample(3, "m3", ("How do I undo a commit?", "What is a rebase?")),
        SplitExample(4, "m4", ("What is JWT?", "What is CORS?")),
        SplitExample(5, "m5", ("a?", "b?", "c?")),
        SplitExample(6, "m6", ("x?", "y?", "z?")),
        SplitExample(7, "m7", ("Why does it crash?",)),
    ]
    answers: dict[str, tuple[str, list[str]] | Exception] = {
        "m1": ("single_topic", ["How do I reverse a list?"]),  # right
        "m2": ("multiple_questions", ["cors 에러는 어떻게 해결해", "JWT가 뭐야？"]),  # reordered
        "m3": ("multiple_questions", ["what is a rebase", "How do I revert a commit"]),  # reworded
        "m4": ("multiple_questions", ["What is JWT?", "What is OAuth?"]),  # case only
        "m5": ("too_many", []),  # right
        "m6": ("multiple_questions", ["x?", "y?"]),  # wrong case
        "m7": ValueError("bad JSON"),  # error
    }

    async def plan(message: str) -> tuple[str, list[str]]:
        answer = answers[message]
        if isinstance(answer, Exception):
            raise answer
        return answer

    progress: list[int] = []
    report = await evaluate_split(examples, plan, on_progress=lambda done, _: progress.append(done))
    # case right: m1..m5 = 5 of 7; fully right: m1, m2, m3, m5 = 4 of 7.
    assert (report.total, report.case_correct, report.fully_correct) == (7, 5, 4)
    assert report.case_accuracy == pytest.approx(5 / 7)
    assert report.full_accuracy == pytest.approx(4 / 7)
    assert report.errors == 1
    counts = {c.case: c for c in report.per_case}
    assert (counts["single_topic"].support, counts["single_topic"].case_correct) == (2, 1)
    assert counts["multiple_questions"].predicted == 4
    assert (
        counts["multiple_questions"].case_correct,
        counts["multiple_questions"].fully_correct,
    ) == (
        3,
        2,
    )
    assert (counts["too_many"].support, counts["too_many"].fully_correct) == (2, 1)
    assert report.confusion.count("too_many", "multiple_questions") == 1
    assert report.confusion.count("single_topic", ERROR_LABEL) == 1
    assert progress == list(range(1, 8))

    data = json.loads(json.dumps(report.to_dict(include_predictions=True)))
    assert data["full_accuracy"] == pytest.approx(4 / 7)
    assert data["per_case"]["multiple_questions"]["fully_correct"] == 2
    # multiple_questions: predicted 4 (m2, m3, m4, m6), right 3 -> precision 3/4.
    assert data["per_case"]["multiple_questions"]["precision"] == pytest.approx(0.75)
    assert data["predictions"][6]["error"] == "ValueError: bad JSON"
    assert data["confusion"]["labels"] == [*PLAN_CASES, ERROR_LABEL]


def test_split_sample_is_seeded_and_keeps_file_order() -> None:
    path = FIXTURES / "split" / "joined.jsonl"
    drawn = load_split_examples(path, sample=20, seed=1)
    assert len(drawn) == 20
    assert [e.line for e in drawn] == sorted(e.line for e in drawn)
    assert drawn == load_split_examples(path, sample=20, seed=1)
    assert drawn != load_split_examples(path, sample=20, seed=2)
    # Extra fields (case, lang, style, parts) are ignored; the questions are read.
    assert all(2 <= len(e.questions) <= 3 for e in drawn)
    assert len(load_split_examples(path, limit=5, sample=50)) == 5
    with pytest.raises(ValueError, match="sample"):
        load_split_examples(path, sample=0)


async def test_evaluate_split_counts_who_decided() -> None:
    # Real messages: StackEval line 1 (a post) and joined.jsonl rows 1 and 205.
    examples = load_split_examples(FIXTURES / "split" / "single_real.jsonl", limit=1)
    examples += [
        e for e in load_split_examples(FIXTURES / "split" / "joined.jsonl") if e.line in (1, 205)
    ]
    deciders = {examples[0].message: "rules", examples[1].message: "model"}

    async def plan(message: str) -> tuple[str, list[str], str]:
        example = next(e for e in examples if e.message == message)
        return example.expected_case, list(example.questions), deciders.get(message, "rules")

    report = await evaluate_split(examples, plan)
    assert [p.decided_by for p in report.predictions] == ["rules", "model", "rules"]
    data = report.to_dict(include_predictions=True)
    assert data["decided_by"] == {"rules": 2, "model": 1}
    assert data["per_case"]["multiple_questions"]["decided_by"] == {"rules": 0, "model": 1}
    assert data["per_case"]["too_many"]["decided_by"] == {"rules": 1, "model": 0}
    assert data["predictions"][1]["decided_by"] == "model"

    async def two_values(message: str) -> tuple[str, list[str]]:
        return "single_topic", [message]

    older = await evaluate_split(examples, two_values)
    assert older.to_dict()["decided_by"] == {"rules": 0, "model": 0}
    assert older.predictions[0].decided_by is None


async def test_evaluate_split_on_fixture_with_reversing_oracle() -> None:
    examples = load_split_examples(FIXTURES / "split_sample.jsonl")
    by_message = {e.message: e for e in examples}

    async def plan(message: str) -> tuple[str, list[str]]:
        example = by_message[message]
        return example.expected_case, list(reversed(example.questions))

    report = await evaluate_split(examples, plan)
    assert report.fully_correct == len(examples) == 13

    async def always_single(message: str) -> tuple[str, list[str]]:
        return "single_topic", [message]

    report = await evaluate_split(examples, always_single)
    assert (report.case_correct, report.fully_correct) == (6, 6)
