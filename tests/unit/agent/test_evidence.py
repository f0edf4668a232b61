"""The closest source reaches the answer prompt whole; the others as their summary.

The post is a real StackEval question and its accepted answer (Stack Overflow, CC BY-SA),
`tests/fixtures/stackeval/whole_answer.jsonl`: the asker wants the key whose value holds a
string, and the function that returns it (`matchingKeys`) is the answer's third code block,
past what a three-sentence summary keeps.
"""

from __future__ import annotations

import re
from pathlib import Path

from langchain_core.messages import BaseMessage

from codeweaver.agent.answering.evidence import (
    ASKED_SHARE,
    CHARS_PER_TOKEN,
    lead_budget,
    prompt_texts,
    whole_text,
)
from codeweaver.agent.nodes.answer import generate_answer
from codeweaver.agent.state import GraphState, SearchResult
from codeweaver.agent.text import extractive_summary
from tests.fakes import doc, make_deps
from tests.unit.agent.whole_answer_post import ANSWER, TITLE, accepted_answer

CODE_BLOCKS = [b.strip() for b in re.findall(r"```(.*?)```", ANSWER, re.DOTALL)]
# The same need in other words: the post is close, not this very question.
REWORDED = "Which keys of my Python dict have a list value holding a given substring?"


def other_source() -> SearchResult:
    long_prose = " ".join(
        f"Sentence {i} about dictionaries and their values in Python." for i in range(40)
    )
    return doc(2, text=long_prose)


def prompt_of(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


async def answer_prompt(tmp_path: Path, **settings: object) -> str:
    deps, llm = make_deps(tmp_path, {"generate_answer": "Use `matchingKeys` [1]."}, **settings)
    state: GraphState = {
        "question": REWORDED,
        "filtered_results": [accepted_answer(), other_source()],
    }
    await generate_answer(state, deps)
    (task, messages), *_ = llm.calls
    assert task == "generate_answer"
    return prompt_of(messages)


def test_a_summary_loses_what_tells_the_functions_apart() -> None:
    # Why the prompt needs the whole answer: the summary keeps the code and drops the lines
    # saying what each function returns, and the block that counts the matches.
    summary = extractive_summary(ANSWER, TITLE)
    assert "def matchingKeys" in summary
    assert "To get the sublists:" not in summary
    assert "# Number of sublists containing 'Mary'" not in summary


async def test_the_top_accepted_answer_reaches_the_prompt_with_all_its_code(
    tmp_path: Path,
) -> None:
    prompt = await answer_prompt(tmp_path)
    for block in CODE_BLOCKS:
        assert block in prompt  # every code block whole
    assert "To get the sublists:" in prompt
    assert "I have a dictionary with key-value pair." in prompt  # its question
    assert "[accepted · python" not in prompt  # metadata, which the model copied as text
    assert "Source [1] is the closest match and is given whole" in prompt
    # The other source is there as its summary, not whole.
    assert "Sentence 0 about dictionaries" in prompt
    assert "Sentence 39 about dictionaries" not in prompt


async def test_a_budget_of_zero_summarises_every_source(tmp_path: Path) -> None:
    prompt = await answer_prompt(tmp_path, answer_source_tokens=0)
    assert "To get the sublists:" not in prompt
    assert "given whole" not in prompt


async def test_a_korean_answer_reads_the_summaries_with_the_code_whole(tmp_path: Path) -> None:
    # A whole English source pulled the small model's Korean answers into English.
    deps, llm = make_deps(tmp_path, {"generate_answer": "`matchingKeys`를 쓰세요 [1]."})
    state: GraphState = {
        "question": "파이썬 딕셔너리 값에 특정 문자열이 있는지 어떻게 찾나요?",
        "language": "ko",
        "filtered_results": [accepted_answer()],
    }
    await generate_answer(state, deps)
    (_, messages), *_ = llm.calls
    prompt = prompt_of(messages)
    assert "given whole" not in prompt and "Question:" not in prompt
    assert "def matchingKeys" in prompt  # the summary keeps code blocks whole
    assert "double list comprehension" not in prompt  # past the summary's length


def test_beyond_the_budget_prose_is_cut_and_code_never() -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(30)) + "\n```"
    prose = [f"Paragraph {i} says something unrelated to anything." for i in range(20)]
    text = "\n\n".join([prose[0], code, *prose[1:], "The keys hold the dictionary values."])
    result = SearchResult(title="t", url="u", snippet=text, source="s", score=None)
    budget = 250  # tokens: room for the code and a few paragraphs
    shown = whole_text(result, "dictionary keys values", budget)
    assert code in shown
    assert shown.startswith(prose[0])  # the lead paragraph stays
    assert "The keys hold the dictionary values." in shown  # the related one stays
    assert len(shown) <= budget * CHARS_PER_TOKEN
    assert "Paragraph 19" not in shown


def test_the_question_takes_at_most_its_share_and_comes_first() -> None:
    result = {**accepted_answer(), "asked": "word " * 2000}
    shown = whole_text(result, TITLE, 1000)
    asked, _, answer = shown.partition("\n\nAnswer:\n")
    assert asked.startswith("Question:\n")
    assert len(asked) <= ASKED_SHARE * 1000 * CHARS_PER_TOKEN + len("Question:\n")
    assert "def matchingKeys" in answer


def test_only_the_first_source_is_shown_whole() -> None:
    texts = prompt_texts([other_source(), accepted_answer()], TITLE, 1000)
    assert "Sentence 39" in texts[0]
    assert "To get the sublists:" not in texts[1]


def test_the_budget_stays_within_the_model_s_context() -> None:
    assert lead_budget(1000, context=4096, answer_tokens=700) == 1000
    assert lead_budget(5000, context=4096, answer_tokens=700) == 4096 - 700 - 900
    assert lead_budget(1000, context=1024, answer_tokens=700) == 0
