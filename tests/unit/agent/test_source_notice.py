"""The notice before an answer says what the search found, as the steps do: nothing,
nothing relevant, or relevant sources the answer does not cite — in both modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.agent.runner import Assistant
from codeweaver.agent.user_text import say
from codeweaver.presentation.progress import progress_lines
from tests.fakes import FakeSource, doc, make_deps

QUESTION = "How do I read a file line by line in Python?"
ANALYZE = '{"question_type": "new_topic", "should_cache": true, "canonical_question": "q"}'
SUPPORTED = "Iterate over the file object to read it line by line [1]."
UNCITED = "Iterate over the file object to read it line by line."


def _script(answer: str) -> dict[str, object]:
    return {
        "analyze_question": ANALYZE,
        "classify_intent": '{"intent": "learning"}',
        "generate_answer": answer,
        "refine_search": '{"query": "read file lines"}',
    }


def _relevant(n: int) -> dict[str, object]:
    text = "To read a file line by line in Python, iterate over the file object. " * 2
    return dict(doc(n, text=text))


async def _ask(tmp_path: Path, answer: str, results: list[dict[str, object]]) -> tuple[str, str]:
    source = FakeSource(results=results)  # type: ignore[arg-type]
    deps, _ = make_deps(tmp_path, _script(answer), [source], cache_enabled=False)
    result = await Assistant(deps).ask(QUESTION)
    found = [line.text for line in progress_lines(result.steps) if line.phase == "found"]
    return result.answer, found[-1]


async def test_nothing_found(tmp_path: Path) -> None:
    answer, found = await _ask(tmp_path, UNCITED, [])
    assert found.startswith("Found nothing")
    assert answer == f"{say('no_source_note', 'en')}\n\n{UNCITED}"


async def test_found_and_cited(tmp_path: Path) -> None:
    answer, found = await _ask(tmp_path, SUPPORTED, [_relevant(1), _relevant(2)])
    assert found.startswith("Found 2: installed docs 2")
    assert answer == SUPPORTED  # no notice


async def test_found_and_not_cited(tmp_path: Path) -> None:
    # The model cited neither relevant result: not "no source was found".
    answer, found = await _ask(tmp_path, "Use a generator.", [_relevant(1), _relevant(2)])
    assert found.startswith("Found 2: installed docs 2")
    assert answer == f"{say('none_cited_note', 'en', count=2)}\n\nUse a generator."


async def test_found_but_none_relevant(tmp_path: Path) -> None:
    off_topic = [dict(doc(1, score=0.05, text="Baking bread at home."))]
    answer, found = await _ask(tmp_path, UNCITED, off_topic)  # type: ignore[arg-type]
    assert found.startswith("Found 1: installed docs 1")
    assert answer == f"{say('no_relevant_note', 'en', count=1)}\n\n{UNCITED}"


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_notice_exists_in_both_languages(language: str) -> None:
    assert say("no_source_note", language)
    assert "3" in say("no_relevant_note", language, count=3)
    assert "3" in say("none_cited_note", language, count=3)
