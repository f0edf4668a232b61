"""Session claims on PostgreSQL: the same contract as on SQLite, and one winner when two
servers claim an id at once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.services import postgres_url
from tests.unit.api.test_session_claims import assert_a_claim_is_one_owners, service

pytestmark = pytest.mark.services


async def test_a_claim_is_one_owners_and_an_empty_one_shows_nothing(tmp_path: Path) -> None:
    async with service(tmp_path, database_url=SecretStr(postgres_url())) as chat:
        await assert_a_claim_is_one_owners(chat)


async def test_two_servers_claiming_one_id_at_once_give_it_to_one_user(tmp_path: Path) -> None:
    session = f"race-{uuid.uuid4().hex}"
    database = SecretStr(postgres_url())
    async with (
        service(tmp_path / "a", database_url=database) as first,
        service(tmp_path / "b", database_url=database) as second,
    ):
        claims = await asyncio.gather(
            *(
                store.index.claim(session, user)
                for _ in range(5)
                for store, user in ((first.store, "alice"), (second.store, "bob"))
            )
        )
        winner = (await first.store.index.session(session)).owner  # type: ignore[union-attr]
        assert claims.count("new") == 1
        for claim, user in zip(claims, ["alice", "bob"] * 5, strict=True):
            assert claim in (("new", "owned") if user == winner else ("foreign",))
        await first.store.delete(session)
