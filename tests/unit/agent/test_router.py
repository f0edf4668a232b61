"""The query router: each branch, by rule and through the graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from codeweaver.agent.rules.router import is_small_talk, route_message
from codeweaver.agent.runner import Assistant
from tests.fakes import FakeSource, make_deps
from tests.unit.agent.test_graph_routes import base_script, nodes_of

PANDAS = "How do I read a CSV file with pandas?"


@pytest.mark.parametrize(
    "message",
    [
        "hi",
        "Hello!",
        "thanks a lot :)",
        "Thank you so much!!",
        "안녕하세요",
        "고마워요 ㅎㅎ",
        "who are you?",
    ],
)
def test_small_talk_is_simple(message: str) -> None:
    assert is_small_talk(message)
    assert route_message(message, None).route == "simple"
    assert route_message(message, PANDAS).route == "simple"


@pytest.mark.parametrize(
    "message",
    [
        "hi, how do I sort a list?",
        "thanks, but why does `open()` fail?",
        "Hello world program in Rust",
        "What is a Python generator?",
    ],
)
def test_a_question_is_never_small_talk(message: str) -> None:
    assert not is_small_talk(message)
    assert route_message(message, None).route == "rag_required"


@pytest.mark.parametrize(
    ("message", "added"),
    [
        ("What about in Rust?", {"rust"}),
        ("How do I do that with polars?", {"polar"}),
        ("그럼 Django에서는?", {"django"}),
        ("And with a semicolon delimiter?", {"semicolon", "delimiter"}),
    ],
)
def test_a_follow_up_with_a_new_subject_needs_the_history(message: str, added: set[str]) -> None:
    decision = route_message(message, PANDAS)
    assert decision.route == "history_required"
    assert set(decision.new_terms) == added


@pytest.mark.parametrize(
    "message",
    [
        "show me an example",  # about the answer itself: analyze_question reads history
        "why is that?",
        "How do I merge two dicts in Python?",  # a new question that stands alone
    ],
)
def test_other_messages_of_a_conversation_go_to_the_pipeline(message: str) -> None:
    assert route_message(message, PANDAS).route == "rag_required"


def test_a_follow_up_opener_without_history_is_a_new_question() -> None:
    assert route_message("What about in Rust?", None).route == "rag_required"


async def test_simple_is_answered_directly_without_search(tmp_path: Path) -> None:
    source = FakeSource()
    deps, llm = make_deps(tmp_path, base_script(answer_directly="Hi! Ask me about code."), [source])
    result = await Assistant(deps).ask("Thanks!")

    assert result.answer == "Hi! Ask me about code."
    assert result.sources == []
    assert llm.tasks() == ["answer_directly"]
    assert source.queries == []
    assert nodes_of(result.steps) == ["route_query", "answer_directly"]
    assert result.steps[0]["message"] == "simple: small talk"
    assert result.cache_keys == ()  # small talk never reaches the cache


async def test_simple_answers_in_korean_and_survives_a_failing_model(tmp_path: Path) -> None:
    def broken(messages: list[BaseMessage]) -> str:
        raise RuntimeError("model crashed")

    deps, _ = make_deps(tmp_path, base_script(answer_directly=broken))
    result = await Assistant(deps).ask("안녕하세요")
    assert "CodeWeaver" in result.answer
    assert any("\uac00" <= c <= "\ud7a3" for c in result.answer)  # Korean text


async def test_rag_required_costs_no_extra_model_call(tmp_path: Path) -> None:
    deps, llm = make_deps(tmp_path, base_script())
    result = await Assistant(deps).ask(PANDAS)

    # The router decides by rule: the same single call as the pipeline alone.
    assert llm.tasks() == ["generate_answer"]
    assert nodes_of(result.steps)[:2] == ["route_query", "create_plan"]
    assert result.steps[0]["message"] == "rag_required: a new conversation"


async def test_history_required_rewrites_then_searches_the_standalone_question(
    tmp_path: Path,
) -> None:
    standalone = "How do I read a CSV file in Rust?"
    source = FakeSource()
    script = base_script(rewrite_question=json.dumps({"question": standalone}))
    deps, llm = make_deps(tmp_path, script, [source])
    assistant = Assistant(deps, InMemorySaver())
    await assistant.ask(PANDAS, "t1")
    result = await assistant.ask("What about in Rust?", "t1")

    assert llm.tasks().count("rewrite_question") == 1
    rewrite_prompt = next(m for t, m in llm.calls if t == "rewrite_question")
    assert PANDAS in str(rewrite_prompt[-1].content)  # the history went into the rewrite
    assert source.queries[-1] == standalone
    answer_prompt = [m for t, m in llm.calls if t == "generate_answer"][-1]
    assert standalone in str(answer_prompt[-1].content)
    assert result.question == "What about in Rust?"  # the user's words stay the turn's
    assert nodes_of(result.steps)[:3] == ["route_query", "rewrite_question", "create_plan"]
    # A rewritten question stands alone: it is searched and may be cached.
    assert result.question_type == "independent"
    assert result.cache_keys == (standalone,)


async def test_a_rewrite_that_drops_the_new_subject_falls_back(tmp_path: Path) -> None:
    source = FakeSource()
    script = base_script(rewrite_question=json.dumps({"question": PANDAS}))
    deps, _ = make_deps(tmp_path, script, [source])
    assistant = Assistant(deps, InMemorySaver())
    await assistant.ask(PANDAS, "t1")
    result = await assistant.ask("What about in Rust?", "t1")

    assert source.queries[-1] == f"What about in Rust? ({PANDAS})"
    errors = [s["message"] for s in result.steps if s["kind"] == "error"]
    assert errors == ["rewrite fell back: the rewrite dropped what the follow-up asks"]


async def test_a_clarification_is_still_answered_from_the_history(tmp_path: Path) -> None:
    source = FakeSource()
    script = base_script(generate_with_history="Here is an example [1].")
    deps, llm = make_deps(tmp_path, script, [source])
    assistant = Assistant(deps, InMemorySaver())
    await assistant.ask(PANDAS, "t1")
    searched = len(source.queries)
    result = await assistant.ask("show me an example", "t1")

    assert source.queries[searched:] == []
    assert "rewrite_question" not in llm.tasks()
    assert result.question_type == "clarification"
    assert nodes_of(result.steps)[0] == "route_query"
