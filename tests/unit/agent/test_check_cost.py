"""What the grounding check may cost: no model call by default, no rewrite but for a
contradiction."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.answering.grounding import GroundingReport
from codeweaver.agent.runner import Assistant
from tests.fakes import FakeSource, make_deps

# StackEval line 14 (Stack Overflow, CC BY-SA 4.0): the accepted answer, abridged.
SOURCE = {
    "title": "Sorting a dict by value",
    "url": "https://docs.python.org/3/howto/sorting.html",
    "snippet": "By default, the dictionary is sorted based on keys, but the sorted function "
    "takes a function as a parameter using which you can alter the behaviour for program.",
    "source": "installed_docs",
    "score": 0.9,
}
KOREAN = (
    "기본적으로 딕셔너리는 키 기준으로 정렬되지만 "
    "sorted 함수에 key 함수를 넘겨 바꿀 수 있습니다 [1]."
)


def _script(answer: str, judge: str) -> dict[str, object]:
    return {
        "analyze_question": '{"canonical_question": "How do I sort a dict by value in Python?"}',
        "generate_answer": answer,
        "check_answer": judge,
    }


async def test_a_korean_answer_costs_no_reader_call_with_the_words_judge(tmp_path: Path) -> None:
    judge = '{"unsupported": [1], "answers_question": false}'
    deps, llm = make_deps(tmp_path, _script(KOREAN, judge), [FakeSource(results=[SOURCE])])
    result = await Assistant(deps).ask("Python 3.6 이상에서 딕셔너리를 값 기준으로 정렬하는 방법")
    assert "check_answer" not in llm.tasks()
    assert llm.tasks().count("generate_answer") == 1
    assert "[1]" in result.answer  # nothing could be checked across languages: it stays


def test_an_off_question_grade_is_reported_but_never_rewrites() -> None:
    report = GroundingReport(answers_question=False, grade_reason="judged off the question")
    assert report.passed  # nothing to rewrite: no claim contradicts its source
    assert "off the question" in report.summary()
