"""A long wait while the answer is written gets a progress line: the doors that show no
draft (`/v1`, MCP) are never silent for long."""

from __future__ import annotations

import time
from pathlib import Path

from codeweaver.agent.runner import Assistant
from codeweaver.api.queue import RunQueue
from codeweaver.api.service import ChatService
from codeweaver.llm.scripted import echo_model
from codeweaver.memory.sessions import open_thread_store
from tests.fakes import FakeSource, doc, make_deps

QUESTION = "How do I read a file line by line in Python?"


async def test_a_slow_draft_is_reported_while_it_is_written(tmp_path: Path) -> None:
    # The model takes a second and a half before its first word.
    deps, _ = make_deps(tmp_path, dict(echo_model(1.5).script), [FakeSource(results=[doc(1)])])
    async with open_thread_store(deps.settings) as store:
        chat = ChatService(Assistant(deps, checkpointer=store.checkpointer), store, RunQueue(1, 4))
        chat.heartbeat_seconds = 0.4
        question, ticket = await chat.reserve(QUESTION)
        events = [event async for event in chat.stream(question, ticket)]
    lines = [e.data["text"] for e in events if e.kind == "progress"]
    writing = lines.index("Writing the answer (relevant sources: 1)")
    waits = [line for line in lines if line.startswith("Still writing")]
    assert waits and set(waits) == {"Still writing: the model is reading the sources"}
    assert lines.index(waits[0]) == writing + 1  # said while writing, not before
    assert len(lines) <= 12
    assert (
        events[-1].kind == "done" and events[-1].data["progress"][writing + 1]["text"] == waits[0]
    )


async def test_no_line_is_said_for_a_quick_run(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, dict(echo_model().script), [FakeSource(results=[doc(1)])])
    async with open_thread_store(deps.settings) as store:
        chat = ChatService(Assistant(deps, checkpointer=store.checkpointer), store, RunQueue(1, 4))
        question, ticket = await chat.reserve(QUESTION)
        events = [event async for event in chat.stream(question, ticket)]
    assert not any(e.kind == "progress" and e.data["text"].startswith("Still") for e in events)


async def test_a_slow_search_is_said_while_it_runs(tmp_path: Path) -> None:
    slow = FakeSource(results=[doc(1)], delay=1.5)
    deps, _ = make_deps(tmp_path, dict(echo_model().script), [slow])
    deps.source_timeout = 10.0
    async with open_thread_store(deps.settings) as store:
        chat = ChatService(Assistant(deps, checkpointer=store.checkpointer), store, RunQueue(1, 4))
        question, ticket = await chat.reserve(QUESTION)
        said: dict[str, float] = {}
        async for event in chat.stream(question, ticket):
            if event.kind == "progress":
                said.setdefault(event.data["text"].split(":")[0], time.monotonic())
    # Said within a tick of the search starting, not when it ends a second and a half later.
    assert said["Found 1"] - said["Searching installed docs…"] > 0.8
