"""The answer-writing and grading helpers both modes share: `write_answer` and `grade`.

For the same scripted model replies, the pipeline and the librarian write the same
answer, fail with the same reason, and add the same warning."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import BaseMessage

from codeweaver.agent import prompts
from codeweaver.agent.answering.grounding import warning
from codeweaver.agent.nodes.answer import EMPTY_ANSWER, write_answer
from codeweaver.agent.nodes.check import grade
from codeweaver.agent.runner import Assistant, RunResult
from codeweaver.agent.state import GraphState, GroundingDetails, UnsupportedClaim
from codeweaver.agent.user_text import say
from codeweaver.llm.scripted import Reply, ScriptedChatModel
from tests.fakes import FakeSource, doc, make_deps

QUESTION = "How do I sort a list in Python?"
SOURCE = doc(
    1,
    text="Use sorted() to get a new sorted list. The list.sort() method sorts in place "
    "and returns None. Both accept a key function and reverse=True.",
)
GROUNDED = "`sorted()` returns a new sorted list [1]. `list.sort()` sorts in place [1]."
INVENTED = "Dictionaries are stored on the GPU by the garbage collector [1]."
# The source's second sentence with a negation added: it says the opposite.
CONTRADICTING = "The `list.sort()` method does not sort in place [1]."


def _crash(messages: list[BaseMessage]) -> str:
    raise RuntimeError("model crashed")


async def _both_modes(tmp_path: Path, reply: Reply) -> tuple[RunResult, RunResult]:
    """The same reply written by the pipeline and by the librarian, from the same source."""
    script: dict[str, Reply] = {
        "classify_intent": '{"intent": "learning"}',
        "generate_answer": reply,
        "librarian_step": [
            json.dumps({"tool": "search_official_docs", "input": "sort a list"}),
            json.dumps({"tool": "answer"}),
        ],
        "librarian_answer": reply,
    }
    results = []
    for mode in ("pipeline", "librarian"):
        deps, _ = make_deps(
            tmp_path / mode,
            script,
            [FakeSource(results=[SOURCE])],
            cache_enabled=False,
            grounding_retries=0,  # the pipeline's rewrite is its own; here both grade once
        )
        results.append(await Assistant(deps).ask(QUESTION, mode=mode))
    return results[0], results[1]


def _errors(result: RunResult, node: str) -> list[str]:
    return [s["message"] for s in result.steps if s["node"] == node and s["kind"] == "error"]


async def test_both_modes_write_the_same_checked_answer(tmp_path: Path) -> None:
    pipeline, librarian = await _both_modes(tmp_path, f"{GROUNDED} Invented [7].")
    assert pipeline.answer == librarian.answer == f"{GROUNDED} Invented."
    assert [s["url"] for s in pipeline.sources] == [s["url"] for s in librarian.sources]


async def test_both_modes_add_the_same_warning_to_a_contradiction(tmp_path: Path) -> None:
    pipeline, librarian = await _both_modes(tmp_path, CONTRADICTING)
    assert pipeline.answer == librarian.answer
    assert pipeline.answer.startswith(CONTRADICTING)
    assert say("contradicts_sources", "en") in pipeline.answer
    assert "does not sort in place" in pipeline.answer.split("\n\n", 1)[1]


async def test_both_modes_fail_for_the_same_reason(tmp_path: Path) -> None:
    pipeline, librarian = await _both_modes(tmp_path, _crash)
    reason = "RuntimeError: model crashed"
    assert _errors(pipeline, "generate_answer") == _errors(librarian, "librarian_answer")
    assert _errors(librarian, "librarian_answer") == [reason]
    head = say("not_written", "en", reason=reason)
    # The pipeline lists the sources it found under the reply; the librarian does not.
    assert pipeline.answer == f"{head}\n\n{say('sources_found', 'en', listing='- [1] doc 1')}"
    assert librarian.answer == head
    assert len(pipeline.sources) == len(librarian.sources) == 1


async def test_an_empty_reply_is_the_same_failure_in_both_modes(tmp_path: Path) -> None:
    pipeline, librarian = await _both_modes(tmp_path, "")
    assert _errors(pipeline, "generate_answer") == [EMPTY_ANSWER]
    assert _errors(librarian, "librarian_answer") == [EMPTY_ANSWER]


# --- write_answer -----------------------------------------------------------------------


async def test_write_answer_tidies_the_reply_against_the_sources() -> None:
    llm = ScriptedChatModel(script={"generate_answer": f"{GROUNDED} Invented [7]."})
    messages = prompts.alone_messages(QUESTION, "en")
    assert await write_answer(llm, messages, [SOURCE], "en", QUESTION) == (
        f"{GROUNDED} Invented.",
        "",
    )


async def test_write_answer_never_raises() -> None:
    messages = prompts.alone_messages(QUESTION, "en")
    crashing = ScriptedChatModel(script={"generate_answer": _crash})
    assert await write_answer(crashing, messages, [], "en", QUESTION) == (
        "",
        "RuntimeError: model crashed",
    )
    empty = ScriptedChatModel(script={"generate_answer": "   "})
    assert await write_answer(empty, messages, [], "en", QUESTION) == ("", EMPTY_ANSWER)


# --- grade ------------------------------------------------------------------------------


async def test_grade_removes_unsupported_citations_and_reports_as_the_node(
    tmp_path: Path,
) -> None:
    deps, llm = make_deps(tmp_path, {})
    state: GraphState = {"question": QUESTION, "language": "en"}
    answer = f"{GROUNDED} {INVENTED}"
    explained = await grade(deps, state, "check_answer", answer, [SOURCE])
    brief = await grade(deps, state, "librarian_check", answer, [SOURCE], explain_removals=False)

    assert explained.answer == brief.answer
    assert "[1]" not in explained.answer.split(GROUNDED)[1]  # the invented claim lost it
    assert explained.report.passed and llm.tasks() == []  # words decided, no model call
    assert [(s["node"], s["kind"]) for s in explained.steps] == [
        ("check_answer", "observe"),
        ("check_answer", "observe"),  # which citation went, and why
    ]
    assert [(s["node"], s["kind"]) for s in brief.steps] == [("librarian_check", "observe")]
    assert explained.steps[0].get("data") == explained.details


async def test_grade_reports_a_contradiction_the_warning_names(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    graded = await grade(deps, {"question": QUESTION}, "check_answer", CONTRADICTING, [SOURCE])
    assert not graded.report.passed
    assert graded.details["contradictions"] == 1
    assert "does not sort in place" in warning(graded.report, "en")


async def test_the_grounding_details_type_matches_the_report(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    graded = await grade(deps, {"question": QUESTION}, "check_answer", INVENTED, [SOURCE])
    details = graded.report.to_dict()
    assert set(details) == GroundingDetails.__required_keys__
    assert details["unsupported"]
    assert set(details["unsupported"][0]) == UnsupportedClaim.__required_keys__
