"""Is the thread store intact and writable? Asked once at start, and when it fails to open.

A damaged or read-only database otherwise opens fine and fails every chat afterwards.
SQLite gets `PRAGMA quick_check` (page-level damage; a few milliseconds on a store of a
few MB, linear in its size) and a write probe; PostgreSQL gets the write probe. The probe
creates a scratch table and a row in a transaction that is rolled back, so it needs only
what the store needs anyway and leaves nothing behind.

Each problem comes in two wordings: `reason` for clients (what is wrong, no path, no
driver text) and `detail` for the server's log and the console (the file and the cause).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeweaver.memory.thread_store import ThreadStore

logger = logging.getLogger(__name__)

PROBE_TABLE = "cw_write_probe"
_PROBE = (f"CREATE TABLE {PROBE_TABLE} (x INTEGER)", f"INSERT INTO {PROBE_TABLE} VALUES (1)")
_FIX_DIR = "make it writable or set CODEWEAVER_DATA_DIR to a writable folder"
_FIX_FILE = (
    "make the file writable (check its owner, mode and `lsattr` flags) or set "
    "CODEWEAVER_DATA_DIR to a writable folder"
)
_MOVE_ASIDE = (
    "stop the server and move the file aside to start fresh (earlier conversations stay "
    "in the moved file), or restore it from a backup"
)


@dataclass(frozen=True)
class StoreProblem:
    """Why conversations cannot be stored: `reason` for clients, `detail` for the log."""

    reason: str
    detail: str


class _Probed(Exception):
    """Raised inside the probe's transaction so that it is rolled back."""


def _cause(exc: BaseException) -> str:
    """The driver's own words, first line only (never a statement, never a URL)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


def damaged(place: str, cause: str) -> StoreProblem:
    return StoreProblem(
        "the conversation database is damaged, so conversations cannot be saved; "
        "the server's operator must move it aside or restore it",
        f"the thread database {place} is damaged ({cause}); {_MOVE_ASIDE}",
    )


def read_only(place: str, cause: str, fix: str = _FIX_FILE) -> StoreProblem:
    return StoreProblem(
        "the conversation database is read-only, so conversations cannot be saved",
        f"the thread database {place} is read-only ({cause}); {fix}",
    )


def directory_not_writable(directory: Path, cause: str) -> StoreProblem:
    return StoreProblem(
        "the server's data directory is not writable, so conversations cannot be saved",
        f"the data directory {directory} is not writable ({cause}); {_FIX_DIR}",
    )


def _writable(path: Path) -> bool:
    # Unlike the mode bits, access(2) also answers for root: a read-only file system
    # (EROFS) and an immutable file or folder (chattr +i) deny writing to everyone.
    return os.access(path, os.W_OK)


def sqlite_problem(path: Path, exc: BaseException) -> StoreProblem:
    """What an error of the SQLite database `path` means, and what to do about it."""
    cause = _cause(exc)
    name = getattr(exc, "sqlite_errorname", "") or ""
    directory = path.parent
    if path.is_dir():
        return StoreProblem(
            "the conversation database cannot be opened, so conversations cannot be saved",
            f"{path} is a directory, not a thread database; move it aside to start fresh",
        )
    if isinstance(exc, OSError) or name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")):
        if directory.is_dir() and not _writable(directory):
            return directory_not_writable(directory, cause)
        if path.exists() and not _writable(path):
            return read_only(str(path), cause)
        if name.startswith("SQLITE_READONLY"):
            return read_only(str(path), cause)
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return damaged(str(path), cause)
    if name == "SQLITE_FULL":
        return StoreProblem(
            "the server's disk is full, so conversations cannot be saved",
            f"the disk holding the thread database {path} is full ({cause}); free some space",
        )
    return StoreProblem(
        "the conversation database cannot be used, so conversations cannot be saved",
        f"the thread database {path} cannot be used ({cause})",
    )


def directory_problem(directory: Path, exc: OSError) -> StoreProblem:
    """Why the data directory could not be created."""
    cause = exc.strerror or _cause(exc)
    return StoreProblem(
        "the server's data directory cannot be created, so conversations cannot be saved",
        f"cannot create the data directory {directory} ({cause}); create it where it can "
        "be written, or set CODEWEAVER_DATA_DIR to a writable folder",
    )


def sqlite_open_problem(path: Path) -> StoreProblem | None:
    """Whether SQLite can open `path` (created if missing), before anything opens it.

    Opening through aiosqlite fails in its worker thread, which then reports to an event
    loop that is already closed; a plain connection fails here, cleanly, instead.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return directory_problem(path.parent, exc)
    try:
        connection = sqlite3.connect(path, timeout=5)
        try:
            connection.execute("PRAGMA schema_version").fetchall()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return sqlite_problem(path, exc)
    return None


async def check_thread_store(store: ThreadStore) -> StoreProblem | None:
    """None when the store can be read and written; else what is wrong with it."""
    saver: Any = store.checkpointer
    # The checkpointer's own connection, opened as the store opens it, under its lock.
    lock = getattr(saver, "lock", None) or contextlib.nullcontext()
    try:
        async with lock:
            if store.backend == "sqlite":
                return await _check_sqlite(saver.conn)
            return await _check_postgres(saver.conn)
    except Exception as exc:  # an unforeseen failure must still be named, not crash start
        logger.warning("thread store check failed", exc_info=True)
        return StoreProblem(
            "the conversation database cannot be used, so conversations cannot be saved",
            f"the {store.backend} thread store cannot be used ({type(exc).__name__}: "
            f"{_cause(exc)})",
        )


async def _rows(connection: Any, sql: str) -> list[Any]:
    cursor = await connection.execute(sql)
    return list(await cursor.fetchall())


async def _check_sqlite(connection: Any) -> StoreProblem | None:
    """`connection`: an aiosqlite connection to the store's database."""
    listed = await _rows(connection, "PRAGMA database_list")
    path = Path(next((str(r[2]) for r in listed if r[1] == "main"), "") or "threads.sqlite")
    try:
        found = [str(r[0]) for r in await _rows(connection, "PRAGMA quick_check")]
        if found != ["ok"]:
            return damaged(str(path), "; ".join(found[:3]) or "quick_check found errors")
        # A savepoint, not BEGIN: it also nests in a transaction the connection has open.
        await connection.execute(f"SAVEPOINT {PROBE_TABLE}")
        try:
            for statement in _PROBE:
                await connection.execute(statement)
        finally:
            try:
                await connection.execute(f"ROLLBACK TO {PROBE_TABLE}")
                await connection.execute(f"RELEASE {PROBE_TABLE}")
            except sqlite3.Error:
                await connection.rollback()
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            # Another process writes (a CLI run, a second server): in use, not broken.
            logger.info("thread database %s is busy; write check skipped", path)
            return None
        return sqlite_problem(path, exc)
    return None


async def _check_postgres(connection: Any) -> StoreProblem | None:
    """`connection`: the checkpointer's psycopg connection (or pool)."""
    import psycopg

    if not isinstance(connection, psycopg.AsyncConnection):
        async with connection.connection() as pooled:
            return await _check_postgres(pooled)
    try:
        async with connection.transaction():
            for statement in _PROBE:
                await connection.execute(statement)
            raise _Probed  # rolls the transaction back
    except _Probed:
        return None
    except psycopg.Error as exc:
        state = getattr(exc, "sqlstate", None) or ""
        cause = type(exc).__name__
        if state == "25006":  # read_only_sql_transaction: a standby, or read-only by default
            fix = "point DATABASE_URL at a primary server that accepts writes"
            return read_only("of DATABASE_URL", cause, fix)
        return StoreProblem(
            "the conversation database cannot be written, so conversations cannot be saved",
            f"the PostgreSQL database of DATABASE_URL cannot be written ({cause}, "
            f"SQLSTATE {state or 'unknown'})",
        )
