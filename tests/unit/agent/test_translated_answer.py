"""A question in another language whose closest Stack Overflow question was found gets that
answer translated: its prose paragraph by paragraph, its code byte for byte, and a
paragraph whose translation changed a name or drifted out of the language kept as the
author wrote it. The post is a real StackEval question and its accepted answer
(Stack Overflow, CC BY-SA), `tests/fixtures/stackeval/whole_answer.jsonl`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from langchain_core.messages import BaseMessage

from codeweaver.agent.answering.evidence import close_question
from codeweaver.agent.answering.translation import cleaned, must_keep, unfaithful
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from tests.fakes import FakeSource, make_deps
from tests.unit.agent.whole_answer_post import accepted_answer

QUESTION = "파이썬 딕셔너리 값에 특정 문자열이 들어 있는지 어떻게 검색하나요?"
ENGLISH = "How to search if a dictionary value contains a certain string in Python?"
MATCHING_KEYS = (
    "def matchingKeys(dictionary, searchString):\n"
    "    return [key for key,val in dictionary.items() if any(searchString in s for s in val)]"
)
# What the model replies per paragraph (by its first words); the second drops `sum()`.
KOREAN = {
    "I am a bit late": "조금 늦었지만, 리스트 컴프리헨션과 `any` 함수를 쓰는 방법도 있습니다. "
    "`any`는 이터러블을 받아 원소 하나라도 `True`이면 `True`를 반환합니다:",
    "If you wanna count": '"Mary"가 들어 있는 원소의 수를 세려면 합계 함수를 쓰면 됩니다:',
    "From these methods": "이 방법들로 어떤 키나 값이 일치하는지 검사하는 함수를 "
    "쉽게 만들 수 있습니다.",
    "To get the keys": "'Mary'가 들어 있는 키를 얻으려면:",
    "To get the sublists": "하위 리스트를 얻으려면:",
    "To get the strings": "```\n문자열을 얻으려면:\n```\n</source>",
    "And if you want": '"Mary"가 들어 있는 문자열만 얻으려면 이중 리스트 컴프리헨션을 쓰면 됩니다:',
}


def translate(messages: list[BaseMessage]) -> str:
    paragraph = str(messages[-1].content)
    return next(ko for en, ko in KOREAN.items() if en in paragraph)


def script() -> dict[str, object]:
    return {
        "analyze_question": json.dumps({"canonical_question": ENGLISH}),
        "classify_intent": '{"intent": "learning"}',
        "translate": translate,
        "generate_answer": "이 답변은 쓰이면 안 됩니다 [1].",
    }


async def test_the_closest_answer_is_translated_with_its_code_as_written(
    tmp_path: Path,
) -> None:
    deps, llm = make_deps(tmp_path, script(), [FakeSource(results=[accepted_answer()])])
    events = [e async for e in Assistant(deps).stream(QUESTION)]
    result = events[-1].result
    assert result is not None
    answer = result.answer
    assert answer.startswith(
        '가장 가까운 질문 "How to search if dictionary value contains certain string with '
        'Python"에 달린 답변 [1]을 옮깁니다 (코드는 원문 그대로):'
    )
    assert MATCHING_KEYS in answer  # the author's code, byte for byte
    assert KOREAN["I am a bit late"] in answer
    # The translation that lost `sum()` is not given: the author's sentence is.
    assert "합계 함수" not in answer
    assert "you can use `sum()`:" in answer
    # A reply wrapped in a fence and trailed by our tag is unwrapped and cut.
    assert "\n\n문자열을 얻으려면:\n\n" in answer and "</source>" not in answer
    assert "To get both:" in answer  # too short to be worth a model call
    assert not [task for task, _ in llm.calls if task == "generate_answer"]
    translated = [m for task, m in llm.calls if task == "translate"]
    assert len(translated) == 7
    assert not any("```" in str(m[-1].content) for m in translated)  # code never sent
    assert result.sources[0]["url"] == "https://stackoverflow.com/q/32012345"
    # Each paragraph is shown as it starts, and the turn records what was shown.
    shown = [e.step for e in events if e.kind == "step" and e.step is not None]
    progress = [s["message"] for s in shown if ": paragraph" in s["message"]]
    assert progress == [
        f"translating answer [1] into Korean: paragraph {n} of 7" for n in range(1, 8)
    ]
    assert {s["id"] for s in shown} == {s["id"] for s in result.steps}
    notes = [s["message"] for s in result.steps if s["kind"] == "observe"]
    assert "answer [1] translated: 6 paragraphs, 1 kept as written (lost sum())" in notes


async def test_a_question_far_from_the_found_title_is_answered_by_the_model(
    tmp_path: Path,
) -> None:
    far: SearchResult = {**accepted_answer(), "title": "Python dictionary of lists: count strings"}
    deps, llm = make_deps(tmp_path, script(), [FakeSource(results=[far])])
    result = await Assistant(deps).ask(QUESTION)
    assert result.answer.startswith("이 답변은 쓰이면 안 됩니다")
    assert not [task for task, _ in llm.calls if task == "translate"]


def test_a_close_question_is_told_from_one_with_the_same_words_about_another_thing() -> None:
    def titled(title: str) -> SearchResult:
        return {**accepted_answer(), "title": title}

    # Model translations of Korean rephrasings of StackEval titles.
    assert close_question(
        "How can I sort a dictionary by its values in Python 3.6 or later?",
        titled("Sort Dict by Values in Python 3.6+"),
    )
    assert close_question(
        "How do you use the `IS NULL` condition in TypeORM's `find` options?",
        titled("How can I have IS NULL condition in TypeORM find options?"),
    )
    # A CoNaLa hard negative: the same words, another question.
    assert not close_question(
        "How to convert a list of multiple integers into a single integer?",
        titled("convert a list of strings `lst` to list of integers"),
    )
    assert not close_question(ENGLISH, {**accepted_answer(), "asked": ""})  # not a Q&A answer


def test_what_a_faithful_translation_keeps() -> None:
    paragraph = (
        "Use `df.fillna()` with `method='ffill'` since pandas 2.1, see "
        "https://pandas.pydata.org/docs/ and DataFrame.ffill for 3 columns."
    )
    assert must_keep(paragraph) >= {
        "df.fillna()",
        "method='ffill'",
        "2.1",
        "https://pandas.pydata.org/docs/",
        "DataFrame.ffill",
        "3",
    }
    good = (
        "pandas 2.1부터는 `df.fillna()`에 `method='ffill'`을 주어 쓰세요. 열 3개라면 "
        "DataFrame.ffill과 https://pandas.pydata.org/docs/ 를 보세요."
    )
    assert unfaithful(paragraph, good, "ko") == ""
    assert unfaithful(paragraph, good.replace("2.1", "2.0"), "ko") == "lost 2.1"
    assert unfaithful(paragraph, paragraph, "ko") == "not in the language"
    drifted = good.replace("쓰세요", "使用하세요")
    assert unfaithful(paragraph, drifted, "ko") == "Chinese characters"
    assert re.match(r"length \d", unfaithful(paragraph, good + " 그리고 " * 80, "ko"))
    assert unfaithful(paragraph, "", "ko") == "empty"


def test_what_the_model_wraps_a_translation_in_is_taken_off() -> None:
    assert cleaned("```korean\n타입 `T`를 구현합니다.\n```", "The type `T`.") == (
        "타입 `T`를 구현합니다."
    )
    assert cleaned("<message>\n반환합니다.\n</message>", "It returns.") == "반환합니다."
    assert cleaned("답입니다.\n</source>\n<review>다른 글", "An answer.") == "답입니다."


COUNT_QUESTION = "딕셔너리의 값 리스트 중 특정 문자열이 들어 있는 것의 개수를 세려면?"
COUNT_ENGLISH = "How do I count the value lists of a dict that hold a given string?"
WRONG = (
    "Use a list comprehension and the `all` function, which takes an iterable and returns "
    "`True` whenever one element is `True` [1]."
)
RIGHT = (
    "Use a list comprehension and the `any` function, which takes an iterable and returns "
    "`True` whenever one element is `True` [1]."
)
SUM_CODE = "```python\nprint(sum(any('Mary' in s for s in v) for v in myDict.values()))\n```"
RIGHT_KO = (
    "리스트 컴프리헨션과 `any` 함수를 쓰세요. `any`는 이터러블을 받아 원소 하나라도 "
    "`True`이면 `True`를 반환합니다 [1]."
)


async def test_without_a_close_question_the_draft_is_written_in_english_checked_then_translated(
    tmp_path: Path,
) -> None:
    script = {
        "analyze_question": json.dumps({"canonical_question": COUNT_ENGLISH}),
        "classify_intent": '{"intent": "learning"}',
        "generate_answer": [WRONG, f"{RIGHT}\n\n{SUM_CODE}"],
        "translate": RIGHT_KO,
    }
    deps, llm = make_deps(tmp_path, script, [FakeSource(results=[accepted_answer()])])
    result = await Assistant(deps).ask(COUNT_QUESTION)
    drafts = [m for task, m in llm.calls if task == "generate_answer"]
    prompt = "\n".join(str(m.content) for m in drafts[0])
    assert COUNT_ENGLISH in prompt and "given whole" in prompt  # English, the source whole
    # The English draft that contradicts its source is read by words and written again.
    assert len(drafts) == 2
    assert result.answer.startswith(RIGHT_KO)
    assert SUM_CODE in result.answer  # the code as the draft wrote it
    assert "`all`" not in result.answer and "Use a list" not in result.answer
    translated = [m for task, m in llm.calls if task == "translate"]
    assert [str(m[-1].content) for m in translated] == [f"<source>\n{RIGHT}\n</source>"]
