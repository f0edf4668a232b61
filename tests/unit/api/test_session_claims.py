"""Claims in the session index: a session is its owner's from before its first turn runs.

Every door of a real server: `tests/e2e/api/test_session_claims.py`; two servers claiming
at once on PostgreSQL: `tests/integration/api/test_session_claims_postgres.py`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from codeweaver.agent.runner import Assistant
from codeweaver.api.conversations import SessionNotFoundError
from codeweaver.api.queue import RunQueue
from codeweaver.api.service import ChatService
from codeweaver.llm.scripted import echo_model
from codeweaver.memory.sessions import open_thread_store
from tests.fakes import FakeSource, doc, make_deps


@asynccontextmanager
async def service(tmp_path: Path, **settings: Any) -> AsyncIterator[ChatService]:
    deps, _ = make_deps(
        tmp_path, dict(echo_model().script), [FakeSource(results=[doc(1)])], **settings
    )
    async with open_thread_store(deps.settings) as store:
        assistant = Assistant(deps, checkpointer=store.checkpointer)
        yield ChatService(assistant, store, RunQueue(1, 4))


async def assert_a_claim_is_one_owners(chat: ChatService) -> None:
    """One owner per claim; a claim without a turn is empty, unlisted and can be given back."""
    session = f"claim-{uuid.uuid4().hex}"
    index = chat.store.index
    assert await chat.claim(session, "alice") is True
    assert await chat.claim(session, "alice") is False  # already hers
    with pytest.raises(SessionNotFoundError):
        await chat.claim(session, "bob")
    # Claimed, no turn yet (its first is running, or was cut off): empty and unlisted.
    info, history = await chat.history(session, "alice")
    assert (info.turns, info.title, history) == (0, "", [])
    assert session not in [s.id for s in await chat.sessions(owner="alice")]
    # Giving a claim back takes only an empty one of its owner.
    assert not await index.release(session, "bob")
    await index.record_turn(session, "How do I open a file?", "With open().", [], (), "x", "alice")
    assert not await index.release(session, "alice")
    listed = await chat.sessions(owner="alice")
    assert [(s.id, s.title, s.turns) for s in listed if s.id == session] == [
        (session, "How do I open a file?", 1)
    ]
    await chat.delete(session, "alice")


async def test_a_claim_is_one_owners_and_an_empty_one_shows_nothing(tmp_path: Path) -> None:
    async with service(tmp_path) as chat:
        await assert_a_claim_is_one_owners(chat)


async def test_a_first_turn_that_fails_gives_its_session_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with service(tmp_path) as chat:

        async def broken(*_args: Any) -> None:
            raise RuntimeError("the database went away")

        monkeypatch.setattr(chat.store.index, "record_turn", broken)
        question_, ticket = await chat.admit("How do I open a file?", "short-lived", "alice")
        events = [e async for e in chat.stream(question_, ticket, "short-lived", owner="alice")]
        assert events[-1].kind == "error" and events[-1].data["retryable"]
        assert await chat.store.index.session("short-lived") is None
        config = {"configurable": {"thread_id": "short-lived", "checkpoint_ns": ""}}
        assert await chat.store.checkpointer.aget_tuple(config) is None  # type: ignore[arg-type]
        # The id is free again, for the retry.
        assert await chat.claim("short-lived", "alice") is True


async def test_a_thread_the_index_never_recorded_is_only_the_local_users(tmp_path: Path) -> None:
    async with service(tmp_path) as chat:
        # As `codeweaver chat --thread work` leaves it: a thread, no index row.
        await chat.assistant.seed("work", [("How do I open a file?", "With open().")])
        with pytest.raises(SessionNotFoundError):
            await chat.claim("work", "bob")
        assert await chat.store.index.session("work") is None
        assert await chat.claim("work", "default") is True
