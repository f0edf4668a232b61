"""A run counts every model call it makes — in subgraphs, in fanned-out workers, in nodes
calling the model directly — and only its own, into `RunResult.usage`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from codeweaver.agent.runner import Assistant
from codeweaver.llm.scripted import ScriptedChatModel, echo_model
from codeweaver.llm.structured import message_text
from codeweaver.llm.usage import Usage, UsageMeter
from tests.fakes import FakeSource, doc, make_deps

JWT, CORS = "JWT가 뭐야?", "CORS 에러는 어떻게 해결해?"


def _analyze(messages: list[BaseMessage]) -> str:
    key = "what is jwt" if "JWT" in message_text(messages[-1]) else "how to fix cors errors"
    return json.dumps(
        {"question_type": "new_topic", "should_cache": True, "canonical_question": key}
    )


def _answer(messages: list[BaseMessage]) -> str:
    return "JWT는 토큰입니다 [1]." if "JWT" in message_text(messages[-1]) else "CORS 헤더 [1]."


SCRIPT: dict[str, Any] = {
    "create_plan": json.dumps({"questions": [JWT, CORS]}, ensure_ascii=False),
    "analyze_question": _analyze,
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": _answer,
}


def metered(tmp_path: Path, script: dict[str, Any], **settings: object) -> Any:
    deps, llm = make_deps(tmp_path, script, [FakeSource(results=[doc(1), doc(2)])], **settings)
    meter = UsageMeter()  # on the model itself: sees every call, whichever run made it
    meter.attach(llm)
    return Assistant(deps, checkpointer=InMemorySaver()), llm, meter


def words_sent(llm: ScriptedChatModel, since: int) -> int:
    return sum(len(message_text(m).split()) for _, sent in llm.calls[since:] for m in sent)


async def test_fanned_out_workers_and_their_subgraphs_are_counted(tmp_path: Path) -> None:
    assistant, llm, meter = metered(tmp_path, SCRIPT)
    result = await assistant.ask(f"{JWT} {CORS}", "t")
    assert result.plan_case == "multiple_questions"
    # Planned by rule; each worker (a graph run inside a node) analyses and answers,
    # after searching in its own search subgraph.
    assert sorted(llm.tasks()) == ["analyze_question"] * 2 + ["generate_answer"] * 2
    assert result.usage == meter.snapshot()
    assert result.usage.calls == len(llm.calls)
    assert result.usage.prompt_tokens == words_sent(llm, 0) > 0
    replies = ["JWT는 토큰입니다 [1].", "CORS 헤더 [1]."]
    assert result.usage.completion_tokens >= sum(len(r.split()) for r in replies)
    assert result.to_dict()["usage"] == {
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "calls": result.usage.calls,
    }


async def test_the_librarian_s_calls_are_counted(tmp_path: Path) -> None:
    assistant, llm, meter = metered(tmp_path, dict(echo_model().script))
    result = await assistant.ask("How do I copy a file in Python?", "t", mode="librarian")
    assert {"librarian_step", "librarian_answer"} <= set(llm.tasks())
    assert result.usage == meter.snapshot() and result.usage.calls == len(llm.calls)
    assert result.usage.prompt_tokens == words_sent(llm, 0)


async def test_a_cached_answer_counts_only_the_calls_it_made(tmp_path: Path) -> None:
    assistant, llm, meter = metered(tmp_path, dict(echo_model().script))
    question = "How do I read a file line by line in Python?"
    first = await assistant.ask(question, "a")
    before, seen = len(llm.calls), meter.snapshot()
    again = await assistant.ask(question, "b")
    assert again.answer == first.answer and "generate_answer" not in llm.tasks()[before:]
    assert again.usage == meter.snapshot() - seen
    assert again.usage.calls == len(llm.calls) - before < first.usage.calls
    assert first.usage.completion_tokens > again.usage.completion_tokens


async def test_concurrent_runs_count_only_their_own_calls(tmp_path: Path) -> None:
    assistant, _, meter = metered(tmp_path, dict(echo_model().script), cache_enabled=False)
    questions = ["How do I parse JSON in Python?", "How do I open a socket in Python, please?"]
    alone = [(await assistant.ask(q, f"alone-{n}")).usage for n, q in enumerate(questions)]
    assert alone[0] != alone[1]  # different questions, different counts
    seen = meter.snapshot()
    together = await asyncio.gather(
        *(assistant.ask(q, f"together-{n}") for n, q in enumerate(questions))
    )
    assert [r.usage for r in together] == alone
    assert meter.snapshot() - seen == Usage(
        sum(u.calls for u in alone),
        sum(u.prompt_tokens for u in alone),
        sum(u.completion_tokens for u in alone),
    )


@pytest.mark.parametrize("mode", ["pipeline", "librarian"])
async def test_a_seeded_thread_is_answered_with_its_history(tmp_path: Path, mode: str) -> None:
    assistant, llm, _ = metered(tmp_path, dict(echo_model().script))
    graph = assistant.librarian if mode == "librarian" else assistant.graph
    thread = {"configurable": {"thread_id": "t"}}
    earlier = [("How do I read a CSV file in Python?", "Use the csv module [1].")]
    await assistant.seed("t", earlier, mode)
    state = await graph.aget_state(thread)
    assert [(m.type, m.content) for m in state.values["messages"]] == [
        ("human", earlier[0][0]),
        ("ai", earlier[0][1]),
    ]
    assert not state.next and llm.calls == []  # nothing scheduled, nothing run
    await assistant.ask("show me an example", "t", mode)
    sent = [message_text(m) for _, messages in llm.calls for m in messages]
    assert any(earlier[0][0] in text and earlier[0][1] in text for text in sent)
    state = await graph.aget_state(thread)
    assert [m.type for m in state.values["messages"]] == ["human", "ai", "human", "ai"]
