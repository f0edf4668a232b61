"""The thread store is checked at start, and a store that cannot open says why.

Damaged and read-only databases are real files: a store written with sessions, then
overwritten mid-file, or made unwritable. Root ignores mode bits, so "unwritable" is
`chattr +i` as root (skipped where the capability is missing) and `chmod` otherwise;
SQLite's `mode=ro` URI opens a database read-only for everyone, root included, the same
state SQLite falls back to when the file cannot be opened for writing. (PostgreSQL:
`tests/integration/memory/test_store_check_postgres.py`.)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiosqlite
import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from codeweaver.memory.checkpoint import ThreadStoreError, sqlite_checkpointer
from codeweaver.memory.sessions import SqlSessionIndex, ThreadStore, open_thread_store
from codeweaver.memory.store_check import PROBE_TABLE, StoreProblem, check_thread_store
from tests.fakes import make_settings

ROOT = os.geteuid() == 0


@contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """`path` (a file or a folder) cannot be written, by root either."""
    if not ROOT:
        mode = path.stat().st_mode
        path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("root ignores file modes and chattr is not installed")
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("root ignores file modes and chattr +i is not permitted here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


async def write_sessions(tmp_path: Path, count: int = 400) -> Path:
    """A store of about 1.5 MB: enough pages that damage mid-file spares the schema."""
    settings = make_settings(tmp_path, database_url=None)
    async with open_thread_store(settings) as store:
        for n in range(count):
            await store.index.record_turn(
                f"s{n}", f"question {n} " + "q" * 400, "answer " + "a" * 3000, [], ["k"], "x"
            )
    return settings.checkpoint_path


async def check_at_start(tmp_path: Path) -> StoreProblem | None:
    async with open_thread_store(make_settings(tmp_path, database_url=None)) as store:
        return await check_thread_store(store)


def assert_fit_for_clients(problem: StoreProblem, tmp_path: Path) -> None:
    for leaked in (str(tmp_path), "threads.sqlite", "malformed", "readonly", PROBE_TABLE):
        assert leaked not in problem.reason


async def test_a_healthy_store_passes_and_keeps_nothing_of_the_probe(tmp_path: Path) -> None:
    database = await write_sessions(tmp_path, count=3)
    async with open_thread_store(make_settings(tmp_path, database_url=None)) as store:
        assert await check_thread_store(store) is None
        # The checkpointer's connection is left as it was: it still writes and commits.
        await store.checkpointer.adelete_thread("none")
        await store.index.record_turn("after", "q", "a", [], [], "pipeline")
        assert await check_thread_store(store) is None
    async with aiosqlite.connect(database) as db:
        cursor = await db.execute("SELECT name FROM sqlite_master WHERE name = ?", (PROBE_TABLE,))
        assert await cursor.fetchall() == []


async def test_a_store_damaged_mid_file_is_reported(tmp_path: Path) -> None:
    database = await write_sessions(tmp_path)
    assert database.stat().st_size > 1_000_000
    with database.open("r+b") as handle:
        handle.seek(400 * 1024)
        handle.write(os.urandom(200 * 1024))
    problem = await check_at_start(tmp_path)  # it opens: the damage is in the data pages
    assert problem is not None
    assert "damaged" in problem.reason
    assert_fit_for_clients(problem, tmp_path)
    assert str(database) in problem.detail and "move the file aside" in problem.detail
    assert "malformed" in problem.detail


async def test_a_database_opened_read_only_is_reported(tmp_path: Path) -> None:
    database = await write_sessions(tmp_path, count=3)
    async with aiosqlite.connect(f"file:{database}?mode=ro", uri=True) as connection:
        store = ThreadStore(
            AsyncSqliteSaver(connection), SqlSessionIndex(connection, "?"), "sqlite"
        )
        problem = await check_thread_store(store)
    assert problem is not None and "read-only" in problem.reason
    assert_fit_for_clients(problem, tmp_path)
    assert "move the file aside" not in problem.detail


async def test_an_unwritable_database_file_opens_and_is_reported(tmp_path: Path) -> None:
    database = await write_sessions(tmp_path, count=3)
    with unwritable(database):
        problem = await check_at_start(tmp_path)
    assert problem is not None and "read-only" in problem.reason
    assert str(database) in problem.detail and "move the file aside" not in problem.detail


async def test_an_unwritable_data_directory_is_named_not_the_file(tmp_path: Path) -> None:
    database = await write_sessions(tmp_path, count=3)
    with unwritable(database.parent), pytest.raises(ThreadStoreError) as failed:
        await check_at_start(tmp_path)
    message = str(failed.value)
    assert f"data directory {database.parent} is not writable" in message
    assert "CODEWEAVER_DATA_DIR" in message and "move the file aside" not in message


async def test_a_data_directory_that_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    settings = make_settings(tmp_path, database_url=None)
    settings = settings.model_copy(update={"data_dir": parent / "data"})
    with unwritable(parent), pytest.raises(ThreadStoreError) as failed:
        async with open_thread_store(settings):
            pass
    assert f"cannot create the data directory {parent / 'data'}" in str(failed.value)
    with unwritable(parent), pytest.raises(ThreadStoreError, match="cannot create"):
        async with sqlite_checkpointer(parent / "data" / "threads.sqlite"):
            pass


def test_a_directory_in_place_of_the_database_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clear error, and no traceback from a worker thread after the loop closed."""
    settings = make_settings(tmp_path, database_url=None)
    settings.checkpoint_path.mkdir(parents=True)
    crashed: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashed.append(args.exc_value))

    async def start() -> None:
        async with open_thread_store(settings):
            pass

    before = set(threading.enumerate())
    with pytest.raises(ThreadStoreError, match="is a directory"):
        asyncio.run(start())  # closes its loop, as a failed server start does
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=5)
    assert crashed == []
