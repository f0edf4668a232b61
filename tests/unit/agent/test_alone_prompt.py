"""With nothing relevant found, the pipeline answers as the bare model would."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent import prompts
from codeweaver.agent.runner import Assistant
from codeweaver_eval.prompts import bare_messages
from tests.fakes import FakeSource, make_deps

# StackEval line 13 (Stack Overflow, CC BY-SA 4.0).
QUESTION = "Python range to list"


def test_the_alone_prompt_is_the_bare_prompt_for_an_english_question() -> None:
    alone = prompts.alone_messages(QUESTION, "en")
    bare = bare_messages(QUESTION)
    assert [m.content for m in alone] == [m.content for m in bare]
    assert alone[0].name == "generate_answer"  # still the answer task for scripted models


def test_a_korean_question_alone_adds_only_the_language_instruction() -> None:
    question = "Python 3.6 이상에서 딕셔너리를 값 기준으로 정렬하는 방법"
    alone = prompts.alone_messages(question, "ko")
    assert alone[0].content == prompts.ALONE_ANSWER
    assert alone[1].content == f"{question}\n\n{prompts.ANSWER_IN['ko']}"


async def test_the_graph_answers_alone_when_nothing_relevant_came_back(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path, {"generate_answer": "Use list(range(10))."}, [FakeSource(results=[])]
    )
    result = await Assistant(deps).ask(QUESTION)
    (_task, messages), *_ = [c for c in llm.calls if c[0] == "generate_answer"]
    assert [m.content for m in messages] == [m.content for m in bare_messages(QUESTION)]
    assert result.answer.endswith("Use list(range(10)).")
