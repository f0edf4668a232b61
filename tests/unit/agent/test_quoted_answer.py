"""A source that answers this very question reaches the reader as its author wrote it.

The model writes a short lead-in from the whole source; the answer itself follows, quoted
verbatim with its number. The post is a real StackEval question and its accepted answer
(Stack Overflow, CC BY-SA), `tests/fixtures/stackeval/whole_answer.jsonl`.
"""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.answering.evidence import answer_as_written, lead_in, same_question
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import SearchResult
from tests.fakes import FakeSource, make_deps
from tests.unit.agent.whole_answer_post import ANSWER, TITLE, accepted_answer

MATCHING_KEYS = (
    "def matchingKeys(dictionary, searchString):\n"
    "    return [key for key,val in dictionary.items() if any(searchString in s for s in val)]"
)
LEAD_IN = (
    "Test every string of each value list with `any()` inside a comprehension over "
    "`dictionary.items()` [1]."
)


def script(*drafts: str) -> dict[str, object]:
    return {"classify_intent": '{"intent": "learning"}', "generate_answer": list(drafts)}


async def test_the_answer_to_this_very_question_is_quoted_after_the_lead_in(
    tmp_path: Path,
) -> None:
    deps, llm = make_deps(tmp_path, script(LEAD_IN), [FakeSource(results=[accepted_answer()])])
    result = await Assistant(deps).ask(TITLE)
    lead, _, quote = result.answer.partition("\n\nThe answer [1], as its author wrote it:\n\n")
    assert lead == LEAD_IN
    assert quote.startswith("I am a bit late, but another way")
    assert MATCHING_KEYS in quote  # the author's code, byte for byte
    assert "[accepted ·" not in result.answer
    (_, messages), *_ = [c for c in llm.calls if c[0] == "generate_answer"]
    prompt = "\n".join(str(m.content) for m in messages)
    assert "answers this very question" in prompt
    assert MATCHING_KEYS in prompt  # written from the whole source


async def test_code_the_model_writes_anyway_is_left_to_the_quote(tmp_path: Path) -> None:
    draft = (
        f"{LEAD_IN} Here is how [1]:\n\n```python\nprint(any('Mary' in v for v in d))\n```\n\n"
        "It returns the keys [1]."
    )
    deps, _ = make_deps(tmp_path, script(draft), [FakeSource(results=[accepted_answer()])])
    result = await Assistant(deps).ask(TITLE)
    lead = result.answer.split("\n\nThe answer [1]")[0]
    assert lead == f"{LEAD_IN} It returns the keys [1]."


async def test_a_lead_in_that_contradicts_the_source_is_rewritten_and_the_quote_kept(
    tmp_path: Path,
) -> None:
    wrong = (
        "Use a list comprehension and the `all` function, which takes an iterable and "
        "returns `True` whenever one element is `True` [1]."
    )
    deps, llm = make_deps(
        tmp_path, script(wrong, LEAD_IN), [FakeSource(results=[accepted_answer()])]
    )
    result = await Assistant(deps).ask(TITLE)
    drafts = [m for task, m in llm.calls if task == "generate_answer"]
    assert len(drafts) == 2
    assert result.answer.startswith(LEAD_IN)
    assert result.answer.count(MATCHING_KEYS) == 1


async def test_a_lead_in_sentence_the_quote_does_not_support_is_dropped(tmp_path: Path) -> None:
    unsupported = "This approach is portable across every operating system and Python 2.4 [1]."
    deps, _ = make_deps(
        tmp_path, script(f"{LEAD_IN} {unsupported}"), [FakeSource(results=[accepted_answer()])]
    )
    result = await Assistant(deps).ask(TITLE)
    assert result.answer.startswith(f"{LEAD_IN}\n\nThe answer [1], as its author wrote it:")
    assert "portable" not in result.answer


async def test_a_lead_in_with_nothing_supported_leaves_the_quote_alone(tmp_path: Path) -> None:
    unsupported = "This approach is portable across every operating system and Python 2.4 [1]."
    deps, _ = make_deps(tmp_path, script(unsupported), [FakeSource(results=[accepted_answer()])])
    result = await Assistant(deps).ask(TITLE)
    assert result.answer.startswith("The answer [1], as its author wrote it:")


async def test_another_question_gets_the_whole_source_but_no_quote(tmp_path: Path) -> None:
    question = "Which keys of my Python dict have a list value holding a given substring?"
    deps, llm = make_deps(tmp_path, script(LEAD_IN), [FakeSource(results=[accepted_answer()])])
    result = await Assistant(deps).ask(question)
    assert "as its author wrote it" not in result.answer
    (_, messages), *_ = [c for c in llm.calls if c[0] == "generate_answer"]
    assert "given whole" in "\n".join(str(m.content) for m in messages)


async def test_a_korean_question_is_answered_in_korean_without_the_english_quote(
    tmp_path: Path,
) -> None:
    deps, _ = make_deps(
        tmp_path,
        script("`any()`로 각 값 리스트의 문자열을 검사하세요 [1]."),
        [FakeSource(results=[accepted_answer()])],
    )
    result = await Assistant(deps).ask("파이썬 딕셔너리 값에 특정 문자열이 있는지 어떻게 찾나요?")
    assert "원문" not in result.answer and "I am a bit late" not in result.answer


def test_the_same_question_is_told_from_a_near_one() -> None:
    def titled(title: str) -> SearchResult:
        return {**accepted_answer(), "title": title}

    assert same_question(f"{TITLE}\nI have a dictionary…", accepted_answer())  # a pasted post
    assert same_question(
        "how to search if a dictionary value contains a certain string in python?",
        accepted_answer(),
    )
    assert not same_question(
        "convert a string to an integer", titled("Convert an integer to a string")
    )
    assert not same_question(
        "Check if all elements of a list are the same type",
        titled("Check if all elements of a list are the same"),
    )
    no_question: SearchResult = {**accepted_answer(), "asked": ""}
    assert not same_question(TITLE, no_question)  # not a Q&A answer


def test_the_quote_is_the_answer_without_its_metadata() -> None:
    assert answer_as_written(accepted_answer()) == (ANSWER, False)
    cut: SearchResult = {**accepted_answer(), "snippet": f"[accepted]\n{ANSWER}\n…"}
    assert answer_as_written(cut) == (f"{ANSWER}\n…", True)


async def test_a_quote_the_source_cut_short_says_where_the_rest_is(tmp_path: Path) -> None:
    cut: SearchResult = {**accepted_answer(), "snippet": f"[accepted]\n{ANSWER}\n…"}
    deps, _ = make_deps(tmp_path, script(LEAD_IN), [FakeSource(results=[cut])])
    result = await Assistant(deps).ask(TITLE)
    assert "…\n\n(The answer goes on: https://stackoverflow.com/q/32012345)" in result.answer


def test_a_lead_in_keeps_whole_sentences_only() -> None:
    assert lead_in("It works [1]. Then you can use") == "It works [1]."
    # A real lead-in that drifted into the prompt's own tags.
    drifted = "Raise `RuntimeError` [1]. </source> <review> The review provides a good [1]."
    assert lead_in(drifted) == "Raise `RuntimeError` [1]."
    assert lead_in("One. Two. Three. Four. Five.") == "One. Two. Three. Four."
