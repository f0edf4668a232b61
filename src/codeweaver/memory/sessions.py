"""Sessions: LangGraph threads plus an index of them, in one database (`open_thread_store`).

The checkpointer keeps each thread's graph state (its messages); the index keeps what a
list of conversations needs — title, message count, update time — and each finished turn
with its sources and cache key, for history and feedback. SQLite (the thread file of the
data directory) by default; PostgreSQL when `DATABASE_URL` is set. A turn is written
only once its answer is complete, in one transaction, so killing the server mid-answer
loses nothing that was already answered.

A session is claimed by its owner before its first turn runs: its index row (no turns
yet) is created then, and a claim of a row another user holds fails, so nobody else can
run a turn into it meanwhile. One turn of a thread runs at a time (`ThreadLocks`): each
run checkpoints from the state it started with, so two at once would lose one's turn.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from codeweaver.memory.checkpoint import ThreadStoreError, sqlite_checkpointer
from codeweaver.memory.session_index import SqlSessionIndex
from codeweaver.memory.session_records import (
    DEFAULT_OWNER,
    SESSION_ID,
    SessionInfo,
    SessionOwnerError,
    Turn,
)
from codeweaver.memory.store_check import sqlite_problem
from codeweaver.memory.thread_locks import ThreadLocks
from codeweaver.memory.thread_store import ThreadStore

if TYPE_CHECKING:
    from codeweaver.config import Settings

# The session model lives in the modules below; callers import it from here.
__all__ = [
    "DEFAULT_OWNER",
    "SESSION_ID",
    "SessionInfo",
    "SessionOwnerError",
    "SqlSessionIndex",
    "ThreadLocks",
    "ThreadStore",
    "Turn",
    "open_thread_store",
]


@asynccontextmanager
async def open_thread_store(settings: Settings) -> AsyncIterator[ThreadStore]:
    """SQLite in the data directory, or PostgreSQL when `DATABASE_URL` is set."""
    if settings.database_url is not None:
        from codeweaver.memory.sessions_postgres import postgres_store

        async with postgres_store(settings.database_url.get_secret_value()) as store:
            yield store
    else:
        async with _sqlite(settings.checkpoint_path) as store:
            yield store


@asynccontextmanager
async def _sqlite(path: Path) -> AsyncIterator[ThreadStore]:
    import aiosqlite

    async with AsyncExitStack() as opened:
        # Names a folder or file SQLite cannot use before anything else opens it.
        saver = await opened.enter_async_context(sqlite_checkpointer(path))
        try:
            connection = await opened.enter_async_context(aiosqlite.connect(path, timeout=30))
            await connection.execute("PRAGMA journal_mode=WAL")
            index = SqlSessionIndex(connection, "?")
            await index.setup()
        except sqlite3.Error as exc:
            raise ThreadStoreError(sqlite_problem(path, exc).detail) from exc
        # Outside the `try`: an error while the store is in use is not a reason it
        # cannot be opened.
        yield ThreadStore(saver, index, "sqlite")
