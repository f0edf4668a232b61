"""Persistent checkpointers for conversation threads."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


class ThreadStoreError(RuntimeError):
    """The thread database cannot be used; the message names it and what to do."""


@asynccontextmanager
async def sqlite_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """LangGraph's SQLite checkpointer on `path`, created on first use."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            await saver.setup()
            yield saver
    except sqlite3.DatabaseError as exc:
        raise ThreadStoreError(
            f"thread store {path} cannot be used ({exc}); move the file aside to start "
            "fresh (earlier conversations stay in the moved file)"
        ) from exc
