"""The native API's response models pass on exactly what the service gives: no field
dropped, none added, and absent health fields stay absent (not null)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from codeweaver.api.auth import DEFAULT_USER
from codeweaver.api.service import ChatService
from codeweaver.llm.scripted import Reply
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import app_client

QUESTION = "How do I read a file line by line in Python?"
SCRIPT: dict[str, Reply] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": "Use `open()` and iterate over the file [1]. Each line keeps it [2].",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    deps, _ = make_deps(
        tmp_path,
        SCRIPT,
        [FakeSource(results=[doc(1), doc(2)])],
        api_rate_per_minute=1000,
        cache_enabled=False,  # every turn runs the whole pipeline: same steps, same shape
    )
    with app_client(deps) as running:
        yield running


def ready_health(client: TestClient, *fields: str) -> dict[str, Any]:
    """Health once the service is up and `fields` are reported (the dependencies: after
    their first live check)."""
    for _ in range(200):
        body: dict[str, Any] = client.get("/api/health").json()
        if body["status"] != "starting" and all(f in body for f in fields):
            return body
        time.sleep(0.05)
    raise AssertionError("the service did not start")


def shape(value: Any) -> Any:
    """The keys of every object in `value`, nested, with the types of its leaves."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def done_event(client: TestClient) -> dict[str, Any]:
    """The `done` event of a turn, as the stream sends it (through no response model)."""
    stream = client.post("/api/chat/stream", json={"message": QUESTION})
    lines = stream.text.splitlines()
    found = lines.index("event: done")
    data = next(line for line in lines[found:] if line.startswith("data:"))
    event: dict[str, Any] = json.loads(data.removeprefix("data:").strip())
    return event


def test_each_route_sends_what_the_service_gives(client: TestClient) -> None:
    streamed = done_event(client)
    reply = client.post("/api/chat", json={"message": QUESTION}).json()
    session = reply["session_id"]
    assert reply["sources"] and reply["progress"] and reply["steps"]
    assert shape(reply) == shape(streamed)

    starting = client.app.state.starting  # type: ignore[attr-defined]
    service: ChatService = client.portal.call(starting.service)  # type: ignore[union-attr]
    listed = client.get("/api/sessions").json()
    expected = client.portal.call(service.sessions, 100, DEFAULT_USER)  # type: ignore[union-attr]
    assert listed == as_json([s.to_dict() for s in expected])
    detail = client.get(f"/api/sessions/{session}").json()
    info, messages = client.portal.call(service.history, session, DEFAULT_USER)  # type: ignore[union-attr]
    assert detail == as_json({**info.to_dict(), "history": messages})
    rated = client.post("/api/feedback", json={"session_id": session, "turn": 1, "rating": "up"})
    assert rated.json() == {"ok": True, "cache_removed": False}


def test_health_sends_every_field_it_has_and_no_null_for_those_it_lacks(
    client: TestClient,
) -> None:
    health = ready_health(client, "dependencies")
    stored = set(client.app.state.health)  # type: ignore[attr-defined]
    assert "model_server" not in stored  # no model server here
    assert set(health) == stored | {"status", "problems", "starting", "building", "queue"}
    assert health["starting"] is None
    assert set(health["queue"]) == {"running", "waiting", "concurrency", "max_waiting"}


def test_health_without_a_token_sends_only_the_status(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT, api_token=SecretStr("secret-token"))
    with app_client(deps) as client:
        assert set(ready_health(client)) == {"status"}
        full = client.get("/api/health", headers={"Authorization": "Bearer secret-token"})
        assert {"version", "queue", "stores", "problems"} <= set(full.json())
