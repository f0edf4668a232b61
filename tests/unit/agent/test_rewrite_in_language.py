"""A Korean question whose draft came out in English (or as bare code) is rewritten once."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent import prompts
from codeweaver.agent.runner import Assistant
from tests.fakes import FakeSource, make_deps

# tests/fixtures/korean/stackeval_ko20.jsonl line 5 (StackEval, CC BY-SA 4.0): the 1.5B
# model's draft with one installed-docs source was a code block and "[1]", no prose.
QUESTION = "List를 상속한 서브클래스에는 Python 타입 힌트를 어떻게 붙이나요?"
CODE_ONLY = "```python\nfrom typing import List\n```\n\n[1]"
KOREAN = (
    "`list`를 상속하고 요소 타입을 적으면 됩니다.\n\n```python\nclass MyList(list[int]): ...\n```"
)
ENGLISH = "Subclass `list` and give the element type.\n\nIt works from Python 3.9 on."
SOURCE = {
    "title": "builtins.list — Python 3.11.7",
    "url": "https://docs.python.org/3.11/library/stdtypes.html#list",
    "snippet": "list(iterable=(), /) Built-in mutable sequence. If no argument is given, "
    "the constructor creates a new empty list.",
    "source": "installed_docs",
    "score": 0.5,
}


async def test_a_draft_without_korean_prose_is_rewritten_in_korean(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path,
        {"generate_answer": CODE_ONLY, "rewrite_in_language": KOREAN},
        [FakeSource(results=[dict(SOURCE)])],
    )
    result = await Assistant(deps).ask(QUESTION)
    rewrites = [messages for task, messages in llm.calls if task == "rewrite_in_language"]
    assert len(rewrites) == 1
    assert CODE_ONLY.split("\n\n")[0] in str(rewrites[0][-1].content)  # the draft is the data
    assert result.answer.startswith(KOREAN.split("\n")[0])
    assert any("rewrote the draft in ko: no prose" in str(s["message"]) for s in result.steps)


async def test_a_korean_draft_is_kept_and_a_worse_rewrite_is_ignored(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path, {"generate_answer": KOREAN}, [FakeSource(results=[dict(SOURCE)])]
    )
    await Assistant(deps).ask(QUESTION)
    assert not [task for task, _ in llm.calls if task == "rewrite_in_language"]
    deps, llm = make_deps(
        tmp_path / "b",
        {"generate_answer": ENGLISH, "rewrite_in_language": ENGLISH},
        [FakeSource(results=[dict(SOURCE)])],
    )
    result = await Assistant(deps).ask(QUESTION)
    assert [task for task, _ in llm.calls].count("rewrite_in_language") == 1
    assert ENGLISH.split("\n")[0] in result.answer  # the draft stays: the rewrite was no better


async def test_english_answers_are_never_rewritten(tmp_path: Path) -> None:
    deps, llm = make_deps(
        tmp_path, {"generate_answer": CODE_ONLY}, [FakeSource(results=[dict(SOURCE)])]
    )
    await Assistant(deps).ask("How do I type-hint a subclass of list in Python?")
    assert "rewrite_in_language" not in [task for task, _ in llm.calls]


def test_the_rewrite_prompt_is_korean_and_delimits_the_draft() -> None:
    system, human = prompts.rewrite_in_language_messages(QUESTION, CODE_ONLY, "ko")
    assert system.name == "rewrite_in_language"
    assert f"<previous_answer>\n{CODE_ONLY}\n</previous_answer>" in str(human.content)
    assert str(human.content).endswith(prompts.REWRITE_IN_LANGUAGE_ASK["ko"])
