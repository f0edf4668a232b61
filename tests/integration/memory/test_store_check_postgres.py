"""The thread store's start-up check on PostgreSQL: a healthy database passes and keeps
nothing of the probe, a read-only one is reported, replicas create the tables once (the
SQLite stores: `tests/unit/memory/test_store_check.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from codeweaver.memory.sessions import SqlSessionIndex, ThreadStore, open_thread_store
from codeweaver.memory.store_check import PROBE_TABLE, check_thread_store
from tests.fakes import make_settings
from tests.services import POSTGRES_URL, postgres_url

pytestmark = pytest.mark.services


async def test_the_postgres_probe_passes_on_a_healthy_database() -> None:
    psycopg = pytest.importorskip("psycopg")
    from codeweaver.memory.sessions_postgres import postgres_store

    async with postgres_store(postgres_url()) as store:
        assert await check_thread_store(store) is None
        async with await psycopg.AsyncConnection.connect(POSTGRES_URL) as db:
            cursor = await db.execute("SELECT to_regclass(%s)", (PROBE_TABLE,))
            assert await cursor.fetchone() == (None,)


async def test_a_read_only_postgres_database_is_reported() -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    read_only_url = f"{postgres_url()}?options=-c%20default_transaction_read_only%3Don"
    saver_context = AsyncPostgresSaver.from_conn_string(read_only_url)
    saver = await saver_context.__aenter__()
    try:
        store = ThreadStore(saver, SqlSessionIndex(saver.conn, "%s"), "postgresql")
        problem = await check_thread_store(store)
    finally:
        await saver_context.__aexit__(None, None, None)
    assert problem is not None and "read-only" in problem.reason
    assert "DATABASE_URL" in problem.detail and "postgres@" not in problem.detail


async def test_replicas_starting_together_on_a_new_postgres_database(tmp_path: Path) -> None:
    """Several servers opening one empty database at once create its tables once."""
    import uuid

    import psycopg

    name = f"cw_fresh_{uuid.uuid4().hex[:12]}"
    admin = await psycopg.AsyncConnection.connect(postgres_url(), autocommit=True)
    await admin.execute(f"CREATE DATABASE {name}")
    url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    try:

        async def open_one(index: int) -> str:
            settings = make_settings(tmp_path / str(index), database_url=url)
            async with open_thread_store(settings) as store:
                return store.backend

        assert await asyncio.gather(*(open_one(i) for i in range(4))) == ["postgresql"] * 4
    finally:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        await admin.close()
