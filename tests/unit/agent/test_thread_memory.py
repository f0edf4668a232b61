"""A turn that never got its answer leaves nothing in the thread's model memory.

Whether the client went away (the run is cancelled or its stream closed) or the process
was killed (no cleanup runs at all), the next turn's model context holds only answered
turns: human and assistant messages alternate, and "it" never refers to the question
the user got no answer to.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from codeweaver.agent.runner import Assistant, unanswered_ids
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.llm.structured import message_text
from tests.fakes import FakeSource, make_deps

REPO = Path(__file__).resolve().parents[3]
FIRST = "How do I read a file line by line in Python?"
ANSWER = "Iterate over the file object [1]."
CUT_OFF = "How do I parse JSON in Python?"
FOLLOW_UP = "How do I write it?"
SCRIPT: dict[str, Any] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
    "rewrite_question": json.dumps({"question": "How do I write a file in Python?"}),
    "librarian_step": json.dumps({"thought": "", "tool": "answer", "input": ""}),
    "librarian_answer": ANSWER,
    "answer_directly": "Hello! Ask me a programming question.",
}


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


async def kinds_in_thread(assistant: Assistant, name: str = "t") -> list[str]:
    state = await assistant.graph.aget_state(thread(name))
    return [m.type for m in state.values.get("messages", [])]


def history_seen(llm: ScriptedChatModel, task: str) -> str:
    """The conversation block of the last prompt sent for `task`."""
    prompt = next(message_text(m[-1]) for name, m in reversed(llm.calls) if name == task)
    return prompt.split("<history>")[1].split("</history>")[0].strip()


async def assert_follow_up_sees_only_answered_turns(
    assistant: Assistant, llm: ScriptedChatModel
) -> None:
    follow = await assistant.ask(FOLLOW_UP, "t")
    assert follow.answer == ANSWER
    assert history_seen(llm, "rewrite_question") == f"user: {FIRST}\nassistant: {ANSWER}"
    assert await kinds_in_thread(assistant) == ["human", "ai", "human", "ai"]


def assistant_with(
    tmp_path: Path, checkpointer: Any, delay: float = 0.5
) -> tuple[Assistant, ScriptedChatModel]:
    deps, llm = make_deps(tmp_path, SCRIPT, [FakeSource(delay=delay)], cache_enabled=False)
    deps.source_timeout = 10.0
    return Assistant(deps, checkpointer=checkpointer), llm


async def test_a_cancelled_turn_leaves_no_question_in_the_thread(tmp_path: Path) -> None:
    assistant, llm = assistant_with(tmp_path, InMemorySaver())
    await assistant.ask(FIRST, "t")
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in assistant.stream(CUT_OFF, "t"):
            started.set()

    run = asyncio.ensure_future(consume())
    await started.wait()  # the first step is out: the question is in the checkpoint
    run.cancel()  # what a client disconnect does to the request's task
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await kinds_in_thread(assistant) == ["human", "ai"]
    await assert_follow_up_sees_only_answered_turns(assistant, llm)


async def test_a_stream_closed_after_its_first_token_leaves_nothing(tmp_path: Path) -> None:
    long_answer = " ".join(["word"] * 200)
    assistant, llm = assistant_with(tmp_path, InMemorySaver(), delay=0.0)
    await assistant.ask(FIRST, "t")
    llm.script["generate_answer"] = [long_answer, ANSWER]
    events = assistant.stream(CUT_OFF, "t")
    async for event in events:
        if event.kind == "token":
            break
    await events.aclose()
    assert await kinds_in_thread(assistant) == ["human", "ai"]
    await assert_follow_up_sees_only_answered_turns(assistant, llm)


@pytest.mark.parametrize("mode", ["pipeline", "librarian"])
async def test_a_turn_killed_without_cleanup_is_dropped_by_the_next(
    tmp_path: Path, mode: str
) -> None:
    """The graph run alone, cancelled: no runner code clears what it checkpointed."""
    assistant, llm = assistant_with(tmp_path, InMemorySaver(), delay=5.0)
    await assistant.ask(FIRST, "t")
    payload = {"question": CUT_OFF, "messages": [HumanMessage(CUT_OFF)]}
    source = assistant.deps.sources["installed_docs"]
    assert isinstance(source, FakeSource)
    asked = len(source.queries)
    killed = asyncio.ensure_future(assistant.graph.ainvoke(payload, thread()))
    deadline = time.monotonic() + 10
    while len(source.queries) == asked:  # until it searches, the question checkpointed
        assert time.monotonic() < deadline, "the run never reached its search"
        await asyncio.sleep(0.01)
    killed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await killed
    assert await kinds_in_thread(assistant) == ["human", "ai", "human"]
    assistant.deps.sources["installed_docs"].delay = 0.0  # type: ignore[attr-defined]
    if mode == "librarian":
        await assistant.ask("How do I skip blank lines in a file?", "t", mode="librarian")
        assert history_seen(llm, "librarian_step") == f"user: {FIRST}\nassistant: {ANSWER}"
        assert await kinds_in_thread(assistant) == ["human", "ai", "human", "ai"]
    else:
        await assert_follow_up_sees_only_answered_turns(assistant, llm)


KILLED_RUN = """
import asyncio, sys, time
from pathlib import Path
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from codeweaver.agent.runner import Assistant
from tests.fakes import FakeSource, make_deps

def answer(messages):
    print("ANSWERING", flush=True)
    time.sleep(60)
    return "never"

async def main():
    data = Path(sys.argv[1])
    deps, _ = make_deps(data, {"classify_intent": '{"intent": "learning"}',
                               "generate_answer": answer}, [FakeSource()],
                        cache_enabled=False)
    async with AsyncSqliteSaver.from_conn_string(str(data / "threads.sqlite")) as saver:
        await Assistant(deps, checkpointer=saver).ask(sys.argv[2], "t")

asyncio.run(main())
"""


async def test_kill_9_mid_answer_leaves_nothing_for_the_next_turn(tmp_path: Path) -> None:
    store = tmp_path / "threads.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(store)) as saver:
        assistant, _ = assistant_with(tmp_path, saver, delay=0.0)
        await assistant.ask(FIRST, "t")
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED_RUN), str(tmp_path), CUT_OFF],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ANSWERING"
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=20)
    async with AsyncSqliteSaver.from_conn_string(str(store)) as saver:
        assistant, llm = assistant_with(tmp_path, saver, delay=0.0)
        state = await assistant.graph.aget_state(thread())
        assert message_text(state.values["messages"][-1]) == CUT_OFF  # what the kill left
        await assert_follow_up_sees_only_answered_turns(assistant, llm)


async def test_a_failed_run_leaves_no_question_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant, _ = assistant_with(tmp_path, InMemorySaver(), delay=0.0)
    await assistant.ask(FIRST, "t")

    def broken(*args: object) -> None:
        raise RuntimeError("a bug in the first node")

    monkeypatch.setattr("codeweaver.agent.nodes.route.route_message", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        await assistant.ask(CUT_OFF, "t")
    assert await kinds_in_thread(assistant) == ["human", "ai"]


def test_unanswered_ids_are_the_trailing_questions_only() -> None:
    asked, answered = HumanMessage("q", id="1"), AIMessage("a", id="2")
    assert unanswered_ids([asked, answered]) == []
    later = [HumanMessage("q2", id="3"), HumanMessage("q3", id="4")]
    assert unanswered_ids([asked, answered, *later]) == ["4", "3"]
    assert unanswered_ids([asked]) == ["1"] and unanswered_ids([]) == []


async def test_routes_that_skip_analysis_report_no_earlier_cache_key(tmp_path: Path) -> None:
    """Small talk and too many questions write no cache key nor, for small talk, a plan:
    an earlier turn's must not be reported (a thumbs-down would forget its answer)."""
    deps, _ = make_deps(tmp_path, SCRIPT, [FakeSource()])
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    first = await assistant.ask(FIRST, "t")
    assert first.cache_keys == (FIRST,) and first.plan_case == "single_topic"
    hello = await assistant.ask("hello", "t")
    assert hello.cache_keys == () and hello.plan_case is None
    many = await assistant.ask("JWT? CORS? Docker?", "t")
    assert many.plan_case == "too_many" and many.cache_keys == ()
