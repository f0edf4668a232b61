"""Threads and sessions in PostgreSQL (`DATABASE_URL`), shared by every server process.

A turn holds its thread against the other processes with a session-level advisory lock
on a connection of its own: a server that dies mid-turn loses the connection, and with
it the lock, so no thread stays locked by a dead replica.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from codeweaver.memory.checkpoint import ThreadStoreError
from codeweaver.memory.session_index import SqlSessionIndex
from codeweaver.memory.thread_locks import OnWait, Release, SharedLock, ThreadLocks, finish
from codeweaver.memory.thread_store import ThreadStore

# The advisory lock taken while the tables are created or migrated (any fixed number).
_SETUP_LOCK = 0x436F6465576561  # "CodeWea"
_SETUP_WAIT_SECONDS = 120.0
# Thread locks use the two-key form, a key space apart from the setup lock's one key.
_THREAD_LOCKS = 0x43575448  # "CWTH"
# A turn waiting for its thread asks again this often (a blocking `pg_advisory_lock`
# cannot be given up when the waiting request is cancelled).
THREAD_POLL_SECONDS = 0.1


def thread_lock_key(thread_id: str) -> int:
    """A 32-bit signed key for `thread_id` (two threads sharing one only wait longer)."""
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


def advisory_thread_lock(url: str) -> SharedLock:
    """The cross-process half of `ThreadLocks` for the database at `url`."""

    async def acquire(thread_id: str, on_wait: OnWait) -> Release:
        import psycopg

        key = (_THREAD_LOCKS, thread_lock_key(thread_id))
        lock = await psycopg.AsyncConnection.connect(url, autocommit=True)

        async def release() -> None:
            # Closing the connection releases the lock too, should the unlock fail.
            try:
                await lock.execute("SELECT pg_advisory_unlock(%s, %s)", key)
            finally:
                await lock.close()

        try:
            while True:
                cursor = await lock.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
                row = await cursor.fetchone()
                if row is not None and row[0]:
                    return release
                on_wait()
                await asyncio.sleep(THREAD_POLL_SECONDS)
        except BaseException:
            await finish(lock.close())
            raise

    return acquire


@asynccontextmanager
async def _setup_turn(url: str) -> AsyncIterator[None]:
    """One server at a time creates or migrates the tables: replicas starting together
    would race on the same migrations.

    The lock is tried, not waited for: a statement waiting on it would be an open
    transaction, which the checkpointer's `CREATE INDEX CONCURRENTLY` waits for in turn.
    """
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as lock:
        deadline = time.monotonic() + _SETUP_WAIT_SECONDS
        while True:
            cursor = await lock.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,))
            row = await cursor.fetchone()
            if row is not None and row[0]:
                break
            if time.monotonic() > deadline:
                raise ThreadStoreError(
                    "another server has been creating the PostgreSQL tables for "
                    f"{_SETUP_WAIT_SECONDS:.0f} s; is it stuck?"
                )
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            await lock.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


@asynccontextmanager
async def postgres_store(url: str) -> AsyncIterator[ThreadStore]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError as exc:
        raise ThreadStoreError(
            "DATABASE_URL is set but the PostgreSQL extra is not installed: "
            "pip install 'codeweaver[postgres]'"
        ) from exc
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as opened:
        try:
            saver = await opened.enter_async_context(AsyncPostgresSaver.from_conn_string(url))
            connection = await opened.enter_async_context(
                await psycopg.AsyncConnection.connect(url)
            )
            async with _setup_turn(url):
                await saver.setup()
                index = SqlSessionIndex(connection, "%s")
                await index.setup()
        except psycopg.Error as exc:  # unreachable, refused, read-only standby, no rights
            # The URL may hold a password: name the failure, never the URL.
            raise ThreadStoreError(
                f"cannot use the PostgreSQL database of DATABASE_URL ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else 'connection failed'})"
            ) from exc
        yield ThreadStore(saver, index, "postgresql", ThreadLocks(advisory_thread_lock(url)))
