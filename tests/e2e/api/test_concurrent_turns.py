"""Turns sent at once in one conversation are answered one after another, so the model's
memory (the thread's checkpoint) keeps every turn, in the order the index numbers them:
in one server (SQLite), and across two servers sharing PostgreSQL. Each run checkpoints
from the state it started with, so two running at once lost one of them."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from codeweaver.llm.scripted import echo_model
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.services import postgres_url

QUESTION = "How do I open a file in Python?"
FOLLOW_UPS = [
    "FOLLOWUP-A: and how do I close it?",
    "FOLLOWUP-B: and how do I read binary data?",
    "FOLLOWUP-C: and what about encodings?",
]
WAITING = "Waiting for the answer before this one in the conversation to finish"


@contextmanager
def serving(tmp_path: Path, **settings: Any) -> Iterator[tuple[str, Path]]:
    """(the URL, the thread file) of a server whose model takes half a second per answer:
    long enough for turns sent together to overlap."""
    deps, _ = make_deps(
        tmp_path,
        dict(echo_model(0.5).script),
        sources=[FakeSource(results=[doc(1)])],
        # Four slots: without the conversation's lock the follow-ups would all run at once.
        api_rate_per_minute=1000,
        api_concurrency=4,
        cache_enabled=False,
        **settings,
    )
    deps.source_timeout = 10.0
    with running_app(deps) as url:
        yield url, deps.settings.checkpoint_path


def chat(url: str, message: str, session: str | None = None) -> httpx.Response:
    body = {"message": message, **({"session_id": session} if session else {})}
    return httpx.post(f"{url}/api/chat", json=body, timeout=60)


def thread_messages(checkpoint: Any) -> list[tuple[str, str]]:
    assert checkpoint is not None, "the thread has no checkpoint"
    return [(m.type, str(m.content)) for m in checkpoint.checkpoint["channel_values"]["messages"]]


def sqlite_thread(path: Path, session: str) -> list[tuple[str, str]]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with closing(sqlite3.connect(path, check_same_thread=False)) as connection:
        config = {"configurable": {"thread_id": session, "checkpoint_ns": ""}}
        return thread_messages(SqliteSaver(connection).get_tuple(config))  # type: ignore[arg-type]


def postgres_thread(url: str, session: str) -> list[tuple[str, str]]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        config = {"configurable": {"thread_id": session, "checkpoint_ns": ""}}
        return thread_messages(saver.get_tuple(config))  # type: ignore[arg-type]


def follow_up_at_once(urls: list[str], session: str) -> list[httpx.Response]:
    """The follow-ups sent together, the n-th to `urls[n % len(urls)]`."""
    with ThreadPoolExecutor(len(FOLLOW_UPS)) as pool:
        sent = [
            pool.submit(chat, urls[n % len(urls)], question, session)
            for n, question in enumerate(FOLLOW_UPS)
        ]
        return [future.result() for future in sent]


def waits(replies: list[httpx.Response]) -> list[list[str]]:
    """Each reply's progress lines that said it waited for its conversation."""
    return [[p["text"] for p in r.json()["progress"] if p["phase"] == "queue"] for r in replies]


def assert_every_turn_remembered(
    history: list[dict[str, Any]], thread: list[tuple[str, str]]
) -> None:
    asked = [m["content"] for m in history if m["role"] == "user"]
    assert asked[0] == QUESTION and sorted(asked[1:]) == sorted(FOLLOW_UPS)
    # The model's memory: every question and its answer, in the index's order.
    assert [kind for kind, _ in thread] == ["human", "ai"] * len(asked)
    assert [text for kind, text in thread if kind == "human"] == asked
    answers = [text for kind, text in thread if kind == "ai"]
    assert all(question in answer for question, answer in zip(asked, answers, strict=True))


def test_follow_ups_sent_at_once_all_reach_the_models_memory_in_order(tmp_path: Path) -> None:
    with serving(tmp_path) as (url, threads):
        session = chat(url, QUESTION).json()["session_id"]
        started = time.monotonic()
        replies = follow_up_at_once([url], session)
        took = time.monotonic() - started
        assert [r.status_code for r in replies] == [200, 200, 200], [r.text for r in replies]
        history = httpx.get(f"{url}/api/sessions/{session}").json()["history"]
    assert sorted(r.json()["turn"] for r in replies) == [2, 3, 4]
    assert_every_turn_remembered(history, sqlite_thread(threads, session))
    # One after another (half a second of model each), and the two that waited said so.
    assert took >= 1.5
    assert sorted(waits(replies)) == [[], [WAITING], [WAITING]]


@pytest.mark.services
def test_follow_ups_through_two_servers_sharing_postgresql_all_reach_its_memory(
    tmp_path: Path,
) -> None:
    database = SecretStr(postgres_url())
    with (
        serving(tmp_path / "a", database_url=database) as (first, _),
        serving(tmp_path / "b", database_url=database) as (second, _),
    ):
        session = chat(first, QUESTION).json()["session_id"]
        replies = follow_up_at_once([first, second], session)
        assert [r.status_code for r in replies] == [200, 200, 200], [r.text for r in replies]
        history = httpx.get(f"{second}/api/sessions/{session}").json()["history"]
    assert sorted(r.json()["turn"] for r in replies) == [2, 3, 4]
    assert_every_turn_remembered(history, postgres_thread(database.get_secret_value(), session))
    # The turns sent to the other server waited too (PostgreSQL's lock), and said so.
    assert sorted(waits(replies)) == [[], [WAITING], [WAITING]]
