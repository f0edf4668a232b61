"""Sessions: LangGraph threads plus an index of them, in one database.

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

import asyncio
import json
import logging
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from codeweaver.memory.checkpoint import ThreadStoreError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TITLE_CHARS = 80
DEFAULT_OWNER = "default"  # the one user of a server without per-user tokens

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


# What a claim found: the row was created for the claimant, was already theirs, or is
# another user's.
Claim = Literal["new", "owned", "foreign"]
# Called once when a turn has to wait for another turn of its thread.
OnWait = Callable[[], None]


class SessionOwnerError(LookupError):
    """The session belongs to another user."""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    turns: int
    created: float
    updated: float
    owner: str = DEFAULT_OWNER

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "messages": self.turns * 2,  # a question and its answer per turn
            "created": self.created,
            "updated": self.updated,
        }


@dataclass(frozen=True)
class Turn:
    session_id: str
    turn: int
    question: str
    answer: str
    sources: list[dict[str, Any]] = field(default_factory=list)
    cache_keys: tuple[str, ...] = ()
    mode: str = "pipeline"
    created: float = 0.0


class SessionIndex(Protocol):
    async def record_turn(
        self,
        session_id: str,
        question: str,
        answer: str,
        sources: list[dict[str, Any]],
        cache_keys: Sequence[str],
        mode: str,
        owner: str = DEFAULT_OWNER,
    ) -> Turn: ...

    async def claim(self, session_id: str, owner: str) -> Claim: ...

    async def release(self, session_id: str, owner: str) -> bool: ...

    async def sessions(self, owner: str, limit: int = 100) -> list[SessionInfo]: ...

    async def session(self, session_id: str) -> SessionInfo | None: ...

    async def turns(self, session_id: str) -> list[Turn]: ...

    async def delete(self, session_id: str) -> bool: ...

    async def record_feedback(
        self, session_id: str, turn: int, owner: str, rating: str, cache_removed: bool
    ) -> None: ...


def title_of(question: str) -> str:
    line = " ".join(question.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


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


# Releases what `SharedLock` acquired.
Release = Callable[[], Awaitable[None]]
# Holds one thread against the other server processes (PostgreSQL's advisory lock):
# waits, calling `on_wait` while it does, and returns how to let go.
SharedLock = Callable[[str, OnWait], Awaitable[Release]]


async def finish(work: Awaitable[None]) -> None:
    """Await `work` to the end even if the caller is cancelled meanwhile (it then goes
    on in the background): a lock must not stay held because its holder was cancelled,
    as a request is when its client leaves (repeatedly, inside an AnyIO cancel scope)."""
    task = asyncio.ensure_future(work)
    await asyncio.shield(task)


class ThreadLocks:
    """One turn at a time per thread: in this process an asyncio lock per thread id, and
    across processes `shared` when the threads live in a shared database."""

    def __init__(self, shared: SharedLock | None = None) -> None:
        self._shared = shared
        # thread id -> (its lock, how many turns hold or wait for it); dropped at 0.
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(
        self,
        thread_id: str,
        on_wait: OnWait | None = None,
        before_release: Release | None = None,
    ) -> AsyncIterator[None]:
        """Wait until no other turn of `thread_id` runs, then hold it; `on_wait` is
        called once if that means waiting. Waiters get it in arrival order here.

        `before_release` runs while the thread is still held, once the block is left;
        it and the release are finished even if the holder is cancelled meanwhile.
        """
        said = False

        def waiting() -> None:
            nonlocal said
            if not said and on_wait is not None:
                said = True
                on_wait()

        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        held: asyncio.Lock | None = None
        release: Release | None = None
        try:
            if lock.locked():
                waiting()
            await lock.acquire()
            held = lock
            if self._shared is not None:
                release = await self._shared(thread_id, waiting)
            yield
        finally:
            whole = held is not None and (self._shared is None or release is not None)
            cleanup = before_release if whole else None
            await finish(self._leave(thread_id, held, release, cleanup))

    async def _leave(
        self,
        thread_id: str,
        held: asyncio.Lock | None,
        release: Release | None,
        cleanup: Release | None,
    ) -> None:
        try:
            for step in (cleanup, release):
                if step is None:
                    continue
                try:
                    await step()
                except Exception:
                    logger.warning("thread %s: could not let go cleanly", thread_id, exc_info=True)
        finally:
            if held is not None:
                held.release()
            lock, users = self._locks[thread_id]
            if users > 1:
                self._locks[thread_id] = (lock, users - 1)
            else:
                del self._locks[thread_id]


@dataclass
class ThreadStore:
    """The checkpointer and the session index of one database, and its thread locks."""

    checkpointer: BaseCheckpointSaver[Any]
    index: SessionIndex
    backend: str  # "sqlite" or "postgresql"
    locks: ThreadLocks = field(default_factory=ThreadLocks)

    async def delete(self, session_id: str) -> bool:
        existed = await self.index.delete(session_id)
        await self.checkpointer.adelete_thread(session_id)
        return existed


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
    from contextlib import AsyncExitStack

    import aiosqlite

    from codeweaver.memory.checkpoint import sqlite_checkpointer
    from codeweaver.memory.store_check import sqlite_problem

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
