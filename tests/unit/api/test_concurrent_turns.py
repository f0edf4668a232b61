"""A turn waits for the other turn of its conversation only so long, then says so and
gives its place back (turns answered one after another over real servers:
`tests/e2e/api/test_concurrent_turns.py`)."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.runner import Assistant
from codeweaver.api.queue import RunQueue
from codeweaver.api.service import ChatService
from codeweaver.llm.scripted import echo_model
from codeweaver.memory.sessions import open_thread_store
from tests.fakes import FakeSource, doc, make_deps

QUESTION = "How do I open a file in Python?"
WAITING = "Waiting for the answer before this one in the conversation to finish"


async def test_a_turn_waits_for_its_conversation_only_so_long(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, dict(echo_model().script), [FakeSource(results=[doc(1)])])
    async with open_thread_store(deps.settings) as store:
        queue = RunQueue(1, 4)
        chat = ChatService(Assistant(deps, checkpointer=store.checkpointer), store, queue)
        chat.turn_wait_seconds = 0.3
        question, ticket = await chat.admit(QUESTION, "busy-chat")
        async with store.locks.hold("busy-chat"):  # another turn of it, still running
            events = [event async for event in chat.stream(question, ticket, "busy-chat")]
        assert [e.kind for e in events] == ["progress", "error"]
        assert events[0].data == {"phase": "queue", "text": WAITING}
        assert events[1].data["retryable"] is True
        assert "still being written" in events[1].data["message"]
        # Its place in line is given back; the session stays claimed: the turn holding
        # it is its first, which gives it back itself if it ends unanswered.
        assert queue.snapshot()["running"] == queue.snapshot()["waiting"] == 0
        assert ticket.done
        assert await store.index.claim("busy-chat", "default") == "owned"
