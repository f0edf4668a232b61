"""`eval answers`: systems side by side, usage per answer, resumable rows, the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from codeweaver.config import Settings
from codeweaver.llm.scripted import ScriptedChatModel, echo_model
from codeweaver.llm.usage import UsageMeter
from codeweaver_eval.answer_systems import (
    bare_system,
    model_judge,
    pipeline_system,
    verdict_of,
)
from codeweaver_eval.answers_eval import (
    AnswerCase,
    Answered,
    evaluate_answers,
    load_answer_cases,
    read_done,
    select_cases,
)
from codeweaver_eval.answers_summary import summarise
from codeweaver_eval.datasets import DatasetError

# CoNaLa question 18594469 (MIT / CC BY-SA).
CONALA_ROW = {
    "intent": "Divide the values of two dictionaries in python",
    "rewritten_intent": "divide each row of dataframe `df` by its sum",
    "snippet": "df.div(df.sum(axis=1), axis=0)",
    "question_id": 18594469,
}


def _case(n: int) -> AnswerCase:
    return AnswerCase(f"q{n}", f"question {n}", "df.div(df.sum(axis=1), axis=0)", True)


def _system(name: str, order: list[str], llm: ScriptedChatModel) -> Any:
    async def answer(question: str) -> Answered:
        order.append(name)
        await llm.ainvoke([AIMessage(question)])
        return Answered(f"{name}: use df.div" if name == "pipeline" else "use df.sum", drafts=1)

    return answer


async def test_each_question_is_answered_by_both_systems_alternating_who_goes_first() -> None:
    llm = ScriptedChatModel(script={}, default="ok")
    meter = UsageMeter()
    meter.attach(llm)
    order: list[str] = []
    systems = {"pipeline": _system("pipeline", order, llm), "bare": _system("bare", order, llm)}
    rows = await evaluate_answers([_case(1), _case(2)], systems, meter)
    assert order == ["pipeline", "bare", "bare", "pipeline"]
    assert [r["first"] for r in rows] == ["pipeline", "bare"]
    pipeline, bare = rows[0]["systems"]["pipeline"], rows[0]["systems"]["bare"]
    assert pipeline["calls"] == 1 and bare["calls"] == 1
    assert pipeline["recall"] == 0.5 and pipeline["found"] == ["div"]
    assert bare["recall"] == 0.5 and bare["found"] == ["sum"]


async def test_a_failing_answer_is_recorded_and_the_run_goes_on() -> None:
    meter = UsageMeter()

    async def broken(question: str) -> Answered:
        raise RuntimeError("model crashed")

    async def fine(question: str) -> Answered:
        return Answered("df.div")

    rows = await evaluate_answers([_case(1), _case(2)], {"pipeline": broken, "bare": fine}, meter)
    assert len(rows) == 2
    assert rows[0]["systems"]["pipeline"]["error"] == "RuntimeError: model crashed"
    assert rows[0]["systems"]["pipeline"]["recall"] == 0.0
    summary = summarise(rows, ["pipeline", "bare"])
    assert summary["systems"]["pipeline"]["errors"] == 2
    assert summary["systems"]["bare"]["identifier_recall"] == 0.5


async def test_rows_are_written_as_they_finish_and_a_rerun_keeps_them(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    meter = UsageMeter()
    calls: list[str] = []

    async def answer(question: str) -> Answered:
        calls.append(question)
        return Answered("df.sum")

    def keep(row: dict[str, Any]) -> None:
        with out.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(row) + "\n")

    systems = {"pipeline": answer, "bare": answer}
    await evaluate_answers([_case(1)], systems, meter, on_row=keep)
    with out.open("a", encoding="utf-8") as sink:
        sink.write('{"id": "q2", "systems": {"pip')  # a run killed mid-line
    calls.clear()
    done = read_done(out)
    assert set(done) == {"q1"}
    rows = await evaluate_answers([_case(1), _case(2)], systems, meter, done=done, on_row=keep)
    assert calls == ["question 2", "question 2"]
    assert [r["id"] for r in rows] == ["q1", "q2"]


def test_summary_has_medians_means_and_the_ratio_to_the_bare_model() -> None:
    def row(pipeline_s: float, bare_s: float, case: str) -> dict[str, Any]:
        base = {"calls": 1, "prompt_tokens": 100, "completion_tokens": 50, "drafts": 1}
        base.update(warnings=0, sources_cited=0, recall=0.5, verdict=None, error=None)
        return {
            "systems": {
                "pipeline": {**base, "seconds": pipeline_s, "calls": 3, "plan_case": case},
                "bare": {**base, "seconds": bare_s, "plan_case": None},
            }
        }

    rows = [row(30, 10, "single_topic"), row(40, 20, "too_many"), row(90, 20, "single_topic")]
    summary = summarise(rows, ["pipeline", "bare"])
    pipeline = summary["systems"]["pipeline"]
    assert pipeline["median_seconds"] == 40 and pipeline["declined"] == 1
    assert pipeline["ratio_to_bare"] == {
        "median_seconds": 2.0,
        "model_calls": 3.0,
        "prompt_tokens": 1.0,
    }


def test_load_reads_stackeval_and_conala_and_refuses_other_shapes(tmp_path: Path) -> None:
    stackeval = tmp_path / "s.jsonl"
    stackeval.write_text(
        json.dumps({"questionId": "abc", "question": "How?\nbody", "answer": "`x`"}) + "\n"
    )
    conala = tmp_path / "c.json"
    conala.write_text(json.dumps([CONALA_ROW]))
    assert load_answer_cases(stackeval) == [AnswerCase("abc", "How?\nbody", "`x`")]
    loaded = load_answer_cases(conala)
    assert loaded[0].question == CONALA_ROW["intent"] and loaded[0].reference_is_code
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"intent": "x"}))
    with pytest.raises(DatasetError, match="JSON array"):
        load_answer_cases(bad)
    with pytest.raises(DatasetError, match="no such file"):
        load_answer_cases(tmp_path / "missing.jsonl")


def test_a_seeded_sample_is_reproducible_and_kept_in_file_order() -> None:
    cases = [_case(n) for n in range(100)]
    first = select_cases(cases, sample=10, seed=1)
    assert first == select_cases(cases, sample=10, seed=1)
    assert first != select_cases(cases, sample=10, seed=2)
    assert [c.id for c in first] == sorted((c.id for c in first), key=lambda i: int(i[1:]))


async def test_the_pipeline_system_runs_the_graph_with_the_cache_off(tmp_path: Path) -> None:
    llm = echo_model()
    settings = Settings(model="scripted:echo", enabled_sources="none", data_dir=tmp_path / "d")
    async with pipeline_system(llm, settings, tmp_path / "run") as answer:
        got = await answer("How do I divide each row of a DataFrame by its sum?")
    # No source is enabled: the answer is the model's alone, and says so first.
    assert got.answer.startswith("_No source was found")
    assert "Scripted answer to: How do I divide" in got.answer
    assert got.plan_case == "single_topic" and got.drafts == 1
    assert "generate_answer" in llm.tasks()
    assert not (tmp_path / "run" / "answer_cache.sqlite").exists()


async def test_the_bare_system_sends_one_plain_prompt() -> None:
    llm = ScriptedChatModel(script={"bare_answer": "Use df.div."})
    got = await bare_system(llm)("How do I divide?")
    assert got.answer == "Use df.div."
    (task, messages), *_ = llm.calls
    assert task == "bare_answer" and len(messages) == 2


async def test_the_judge_maps_stackevals_scores_and_refuses_an_unusable_reply() -> None:
    assert [verdict_of(s) for s in (3, 2, 1, 0)] == [
        "acceptable",
        "acceptable",
        "partial",
        "unacceptable",
    ]
    judge = model_judge(ScriptedChatModel(script={"judge_answer": '{"score": 1}'}))
    assert await judge("q", "ref", "answer") == "partial"
    broken = model_judge(ScriptedChatModel(script={"judge_answer": "no idea"}))
    with pytest.raises(ValueError, match="unusable"):
        await broken("q", "ref", "answer")


async def test_a_korean_question_checks_the_answer_language_and_the_search_form() -> None:
    # tests/fixtures/korean/stackeval_ko20.jsonl, StackEval line 417.
    case = AnswerCase(
        "1fbaa2ab", "pandas에서 NaT와 NaN 값을 각각 다른 값으로 채우는 방법이 있나요?", ""
    )

    async def pipeline(question: str) -> Answered:
        return Answered(
            "Use `fillna` per column.",
            search_queries=(question, "How to fill NaT and NaN values separately in pandas?"),
        )

    async def bare(question: str) -> Answered:
        return Answered("열마다 `fillna`로 다른 값을 채우면 됩니다.")

    (row,) = await evaluate_answers([case], {"pipeline": pipeline, "bare": bare}, UsageMeter())
    assert row["systems"]["pipeline"]["in_question_language"] is False
    assert row["systems"]["pipeline"]["searched_in_english"] is True
    assert row["systems"]["bare"]["in_question_language"] is True
    assert row["systems"]["bare"]["searched_in_english"] is None  # it never searches
    summary = summarise([row], ["pipeline", "bare"])["systems"]
    assert summary["pipeline"]["in_question_language"] == 0
    assert summary["bare"]["in_question_language"] == 1


async def test_each_final_answer_s_code_is_checked_and_the_share_reported() -> None:
    llm = ScriptedChatModel(script={}, default="ok")
    meter = UsageMeter()
    meter.attach(llm)
    order: list[str] = []
    systems = {"pipeline": _system("pipeline", order, llm), "bare": _system("bare", order, llm)}

    def check(answer: str) -> list[str]:  # the bare answers "use df.sum": say it is missing
        return ["pandas.DataFrame.sum"] if "df.sum" in answer else []

    rows = await evaluate_answers([_case(1), _case(2)], systems, meter, code_check=check)
    assert rows[0]["systems"]["bare"]["missing_apis"] == ["pandas.DataFrame.sum"]
    assert rows[0]["systems"]["pipeline"]["missing_apis"] == []
    summary = summarise(rows, ["pipeline", "bare"])["systems"]
    assert summary["bare"]["answers_with_missing_api"] == 2
    assert summary["bare"]["missing_api_rate"] == 1.0
    assert summary["pipeline"]["missing_api_rate"] == 0.0
    unchecked = summarise(await evaluate_answers([_case(1)], systems, meter), ["bare"])
    assert unchecked["systems"]["bare"]["missing_api_rate"] is None
