"""The session index in SQL (sessions, turns, ratings), one text for SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from codeweaver.memory.session_records import (
    DEFAULT_OWNER,
    Claim,
    SessionInfo,
    SessionOwnerError,
    Turn,
    title_of,
)

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS cw_sessions (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, turns INTEGER NOT NULL DEFAULT 0,
        created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL,
        owner TEXT NOT NULL DEFAULT 'default')""",
    """CREATE TABLE IF NOT EXISTS cw_turns (
        session_id TEXT NOT NULL, turn INTEGER NOT NULL, question TEXT NOT NULL,
        answer TEXT NOT NULL, sources TEXT NOT NULL, cache_key TEXT NOT NULL,
        mode TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, turn))""",
    """CREATE TABLE IF NOT EXISTS cw_feedback (
        session_id TEXT NOT NULL, turn INTEGER NOT NULL, owner TEXT NOT NULL,
        rating TEXT NOT NULL, cache_removed INTEGER NOT NULL,
        created DOUBLE PRECISION NOT NULL)""",
]
# Columns added after the first release: (table, column, definition).
_ADDED_COLUMNS = [("cw_sessions", "owner", "TEXT NOT NULL DEFAULT 'default'")]


def _turn(row: Any) -> Turn:
    return Turn(
        session_id=row[0],
        turn=int(row[1]),
        question=row[2],
        answer=row[3],
        sources=json.loads(row[4]),
        cache_keys=tuple(k for k in row[5].split("\n") if k),
        mode=row[6],
        created=float(row[7]),
    )


def _info(row: Any) -> SessionInfo:
    return SessionInfo(row[0], row[1], int(row[2]), float(row[3]), float(row[4]), row[5])


_TURN_COLUMNS = "session_id, turn, question, answer, sources, cache_key, mode, created"
_SESSION_COLUMNS = "id, title, turns, created, updated, owner"
_MARKS = ", ".join("?" * 8)


class SqlSessionIndex:
    """The index over a DB-API style async connection (aiosqlite or psycopg).

    `mark` is the driver's parameter placeholder (`?` or `%s`).
    """

    def __init__(self, connection: Any, mark: str) -> None:
        self._db = connection
        self._mark = mark
        # One connection serves every request: a transaction must not interleave another's.
        self._lock = asyncio.Lock()

    def _sql(self, text: str) -> str:
        return text.replace("?", self._mark)

    async def setup(self) -> None:
        for statement in _SCHEMA:
            await self._db.execute(statement)
        for table, column, definition in _ADDED_COLUMNS:
            cursor = await self._db.execute(f"SELECT * FROM {table} LIMIT 0")
            if column not in {d[0] for d in cursor.description}:
                await self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        await self._db.commit()

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        cursor = await self._db.execute(self._sql(sql), args)
        rows = await cursor.fetchall()
        return list(rows)

    async def _read(self, sql: str, *args: Any) -> list[Any]:
        async with self._lock:
            rows = await self._fetch(sql, *args)
            await self._db.commit()  # end the read transaction (PostgreSQL opens one)
            return rows

    async def record_turn(
        self,
        session_id: str,
        question: str,
        answer: str,
        sources: list[dict[str, Any]],
        cache_keys: Sequence[str],
        mode: str,
        owner: str = DEFAULT_OWNER,
    ) -> Turn:
        """Append a turn; `SessionOwnerError` when the session is another user's."""
        now = time.time()
        keys = tuple(cache_keys)
        async with self._lock:
            return await self._record(session_id, question, answer, sources, keys, mode, now, owner)

    async def _record(
        self,
        session_id: str,
        question: str,
        answer: str,
        sources: list[dict[str, Any]],
        cache_keys: tuple[str, ...],
        mode: str,
        now: float,
        owner: str,
    ) -> Turn:
        try:
            await self._db.execute(
                self._sql(
                    "INSERT INTO cw_sessions (id, title, turns, created, updated, owner) "
                    "VALUES (?, ?, 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
                ),
                (session_id, title_of(question), now, now, owner),
            )
            # A claimed session has no title until its first turn is recorded.
            cursor = await self._db.execute(
                self._sql(
                    "UPDATE cw_sessions SET turns = turns + 1, updated = ?, "
                    "title = CASE WHEN turns = 0 THEN ? ELSE title END "
                    "WHERE id = ? AND owner = ?"
                ),
                (now, title_of(question), session_id, owner),
            )
            if cursor.rowcount != 1:
                raise SessionOwnerError(session_id)
            rows = await self._fetch("SELECT turns FROM cw_sessions WHERE id = ?", session_id)
            number = int(rows[0][0])
            await self._db.execute(
                self._sql(f"INSERT INTO cw_turns ({_TURN_COLUMNS}) VALUES ({_MARKS})"),
                (
                    session_id,
                    number,
                    question,
                    answer,
                    json.dumps(sources),
                    "\n".join(cache_keys),
                    mode,
                    now,
                ),
            )
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        return Turn(session_id, number, question, answer, sources, cache_keys, mode, now)

    async def claim(self, session_id: str, owner: str) -> Claim:
        """Create `session_id`'s row for `owner` unless it exists; say whose it is.

        One statement decides between two claimants (the row's primary key), on SQLite and
        on PostgreSQL alike, so two users never both get "new".
        """
        async with self._lock:
            try:
                rows = await self._fetch("SELECT owner FROM cw_sessions WHERE id = ?", session_id)
                if not rows:
                    now = time.time()
                    cursor = await self._db.execute(
                        self._sql(
                            "INSERT INTO cw_sessions (id, title, turns, created, updated, owner) "
                            "VALUES (?, '', 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
                        ),
                        (session_id, now, now, owner),
                    )
                    if cursor.rowcount == 1:
                        await self._db.commit()
                        return "new"
                    # Another server claimed it meanwhile: its row is committed by now.
                    rows = await self._fetch(
                        "SELECT owner FROM cw_sessions WHERE id = ?", session_id
                    )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise
        return "owned" if rows and rows[0][0] == owner else "foreign"

    async def release(self, session_id: str, owner: str) -> bool:
        """Drop `owner`'s claim of `session_id` if no turn was recorded in it."""
        async with self._lock:
            try:
                cursor = await self._db.execute(
                    self._sql("DELETE FROM cw_sessions WHERE id = ? AND owner = ? AND turns = 0"),
                    (session_id, owner),
                )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise
        return bool(cursor.rowcount)

    async def sessions(self, owner: str, limit: int = 100) -> list[SessionInfo]:
        """`owner`'s sessions with a turn, most recently updated first (a claim whose
        first turn never finished is no conversation to list)."""
        rows = await self._read(
            f"SELECT {_SESSION_COLUMNS} FROM cw_sessions WHERE owner = ? AND turns > 0 "
            "ORDER BY updated DESC LIMIT ?",
            owner,
            limit,
        )
        return [_info(r) for r in rows]

    async def session(self, session_id: str) -> SessionInfo | None:
        rows = await self._read(
            f"SELECT {_SESSION_COLUMNS} FROM cw_sessions WHERE id = ?", session_id
        )
        return _info(rows[0]) if rows else None

    async def turns(self, session_id: str) -> list[Turn]:
        rows = await self._read(
            f"SELECT {_TURN_COLUMNS} FROM cw_turns WHERE session_id = ? ORDER BY turn", session_id
        )
        return [_turn(r) for r in rows]

    async def delete(self, session_id: str) -> bool:
        async with self._lock:
            return await self._delete(session_id)

    async def record_feedback(
        self, session_id: str, turn: int, owner: str, rating: str, cache_removed: bool
    ) -> None:
        async with self._lock:
            try:
                await self._db.execute(
                    self._sql(
                        "INSERT INTO cw_feedback (session_id, turn, owner, rating, "
                        "cache_removed, created) VALUES (?, ?, ?, ?, ?, ?)"
                    ),
                    (session_id, turn, owner, rating, int(cache_removed), time.time()),
                )
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def _delete(self, session_id: str) -> bool:
        try:
            cursor = await self._db.execute(
                self._sql("DELETE FROM cw_sessions WHERE id = ?"), (session_id,)
            )
            await self._db.execute(
                self._sql("DELETE FROM cw_turns WHERE session_id = ?"), (session_id,)
            )
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        return bool(cursor.rowcount)
