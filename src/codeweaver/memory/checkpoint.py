"""Persistent checkpointers for conversation threads."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from codeweaver.memory.store_check import sqlite_open_problem, sqlite_problem


class ThreadStoreError(RuntimeError):
    """The thread database cannot be used; the message names it and what to do."""


@asynccontextmanager
async def sqlite_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """LangGraph's SQLite checkpointer on `path`, created on first use.

    A folder that cannot be created or written, or a path SQLite cannot open, is named
    here, before aiosqlite's worker threads could fail on it.
    """
    problem = await asyncio.to_thread(sqlite_open_problem, path)
    if problem is not None:
        raise ThreadStoreError(problem.detail)
    async with AsyncExitStack() as opened:
        try:
            saver = await opened.enter_async_context(AsyncSqliteSaver.from_conn_string(str(path)))
            await saver.setup()
        except sqlite3.Error as exc:
            raise ThreadStoreError(sqlite_problem(path, exc).detail) from exc
        yield saver
