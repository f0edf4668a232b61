"""The cross-process half of a thread's lock: PostgreSQL's advisory lock, taken by two
lock tables on their own connections as two server processes take it."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
import pytest

from codeweaver.memory.sessions import ThreadLocks
from codeweaver.memory.sessions_postgres import advisory_thread_lock
from tests.services import postgres_url

pytestmark = pytest.mark.services


def count_lock_tries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each `pg_try_advisory_lock` any connection sends, as it is answered."""
    tries: list[str] = []
    execute = psycopg.AsyncConnection.execute

    async def counted(self: psycopg.AsyncConnection[Any], query: Any, *args: Any, **kw: Any) -> Any:
        cursor = await execute(self, query, *args, **kw)
        if "pg_try_advisory_lock" in str(query):
            tries.append(str(query))
        return cursor

    monkeypatch.setattr(psycopg.AsyncConnection, "execute", counted)
    return tries


async def until(condition: Any, what: str, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds:.0f} s for {what}"
        await asyncio.sleep(0.01)


async def test_the_advisory_lock_holds_a_thread_against_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two lock tables on their own connections: two server processes, as PostgreSQL sees them.
    url = postgres_url()
    tries = count_lock_tries(monkeypatch)
    here, there = ThreadLocks(advisory_thread_lock(url)), ThreadLocks(advisory_thread_lock(url))
    thread = f"lock-{uuid.uuid4().hex}"
    waited = asyncio.Event()
    entered = asyncio.Event()

    async def other_turn() -> None:
        async with there.hold(thread, waited.set):
            entered.set()

    async with here.hold(thread):
        other = asyncio.create_task(other_turn())
        await asyncio.wait_for(waited.wait(), 5)
        refused = len(tries)
        await until(lambda: len(tries) >= refused + 2, "two more tries of the waiting turn")
        assert not entered.is_set()  # it waits while this turn holds the thread
    await asyncio.wait_for(other, 5)
    # A holder cancelled mid-turn (its client left) lets go as well.
    holding = asyncio.Event()

    async def cancelled_turn() -> None:
        async with here.hold(thread):
            holding.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(cancelled_turn())
    await asyncio.wait_for(holding.wait(), 5)
    task.cancel()
    entered.clear()
    await asyncio.wait_for(other_turn(), 5)
    assert entered.is_set()
