"""The HTTP API over a real loopback server: every endpoint, streaming order, errors."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from codeweaver.agent.deps import Deps
from codeweaver.agent.state import Intent, SearchResult
from codeweaver.llm.scripted import ScriptedChatModel
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

ANSWER = "Use `open()` and iterate over the file [1]. Each line keeps its newline [2]."
SCRIPT: dict[str, object] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}
QUESTION = "How do I read a file line by line in Python?"


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Parsed events, and pings as {"event": "ping"}."""
    event: dict[str, Any] = {}
    for line in lines:
        if line.startswith(":"):
            yield {"event": "ping"}
        elif not line:
            if event:
                event["data"] = json.loads(event.get("data", "null"))
                yield event
                event = {}
        else:
            name, _, value = line.partition(":")
            event[name] = value[1:] if value.startswith(" ") else value


def app_deps(tmp_path: Path, delay: float = 0.0, **settings: Any) -> tuple[Deps, ScriptedChatModel]:
    deps, llm = make_deps(
        tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1), doc(2)], delay=delay)]
    )
    deps.source_timeout = 10.0  # the delays below are the test's, not timeouts
    if settings:
        deps.settings = deps.settings.model_copy(update=settings)
    return deps, llm


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Deps, ScriptedChatModel]]:
    deps, llm = app_deps(tmp_path, api_rate_per_minute=1000)
    with running_app(deps, ping_seconds=0.2) as url:
        yield url, deps, llm


def chat(url: str, message: str = QUESTION, **extra: Any) -> httpx.Response:
    return httpx.post(f"{url}/api/chat", json={"message": message, **extra}, timeout=30)


def test_health_names_model_sources_and_stores_but_no_secrets(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, github_token=SecretStr("ghp_topsecret123"))
    with running_app(deps) as url:
        started = time.perf_counter()
        response = httpx.get(f"{url}/api/health")
        elapsed = time.perf_counter() - started
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["model"] == deps.settings.model
    assert body["sources"] == {"installed_docs": "ready"}
    assert body["stores"]["threads"] == "sqlite"
    assert body["queue"]["running"] == 0
    assert "ghp_topsecret123" not in response.text
    assert elapsed < 1.0


def test_chat_answers_with_numbered_sources_and_keeps_the_session(
    server: tuple[str, Deps, ScriptedChatModel],
) -> None:
    url, _, _ = server
    first = chat(url)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["answer"] == ANSWER
    assert [s["n"] for s in body["sources"]] == [1, 2]
    fields = {"n", "title", "url", "source", "label", "attribution", "reference", "cited"}
    assert set(body["sources"][0]) == fields
    assert [(s["label"], s["cited"]) for s in body["sources"]] == [("installed docs", True)] * 2
    assert body["progress"][0]["phase"] == "understand"
    assert body["turn"] == 1 and any(s["node"] == "generate_answer" for s in body["steps"])
    assert body["code_findings"] == []  # the field is always there
    assert 'href="#source-2"' in body["html"]
    second = chat(url, "And how do I skip empty lines?", session_id=body["session_id"])
    assert second.json()["session_id"] == body["session_id"] and second.json()["turn"] == 2
    sessions = httpx.get(f"{url}/api/sessions").json()
    assert [(s["id"], s["messages"], s["title"]) for s in sessions] == [
        (body["session_id"], 4, QUESTION)
    ]
    history = httpx.get(f"{url}/api/sessions/{body['session_id']}").json()["history"]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[0]["content"] == QUESTION and history[1]["sources"][1]["n"] == 2


def test_stream_orders_events_and_pings(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, delay=0.5)
    with (
        running_app(deps, ping_seconds=0.2) as url,
        httpx.stream("POST", f"{url}/api/chat/stream", json={"message": QUESTION}) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(sse_events(response.iter_lines()))
    kinds = [e["event"] for e in events if e["event"] != "ping"]
    assert "ping" in [e["event"] for e in events]  # the source took longer than a ping
    ids = [int(e["id"]) for e in events if e["event"] != "ping"]
    assert ids == list(range(1, len(ids) + 1))
    first_token = kinds.index("token")
    assert "act" in kinds[:first_token] and "observe" in kinds[:first_token]
    assert "act" not in kinds[first_token:]
    assert kinds[-1] == "done" and kinds.count("done") == 1 and "error" not in kinds
    done = events[-1]["data"]
    assert "".join(e["data"]["text"] for e in events if e["event"] == "token") == ANSWER
    assert done["answer"] == ANSWER and len(done["sources"]) == 2 and done["session_id"]


class StalledSource(FakeSource):
    """A search that ends when the test lets it, and says when it has."""

    def __init__(self) -> None:
        super().__init__(results=[doc(1), doc(2)])
        self.release = threading.Event()  # both set and read across the server's thread
        self.ended = threading.Event()

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        self.queries.append(query)
        try:
            while not self.release.is_set():
                await asyncio.sleep(0.01)
            return self.results
        finally:
            self.ended.set()


def test_disconnect_cancels_the_run(tmp_path: Path) -> None:
    deps, llm = app_deps(tmp_path)
    source = StalledSource()
    deps.sources = {source.name: source}
    answering = threading.Event()

    def answer(messages: list[Any]) -> str:
        answering.set()
        return ANSWER

    llm.script["generate_answer"] = answer
    with running_app(deps) as url:
        with httpx.stream("POST", f"{url}/api/chat/stream", json={"message": QUESTION}) as resp:
            for line in resp.iter_lines():
                if line.startswith("event: act"):
                    # Searching has started (and holds the slot); leaving the loop closes
                    # the connection.
                    assert httpx.get(f"{url}/api/health").json()["queue"]["running"] == 1
                    break
        deadline = time.monotonic() + 5
        while httpx.get(f"{url}/api/health").json()["queue"]["running"]:
            assert time.monotonic() < deadline, "the run kept its slot after the disconnect"
            time.sleep(0.05)
        source.release.set()  # the search in flight ends, as a slow source's would
        assert source.ended.wait(5), "the search never ended"
        # Nothing signals a run that stopped, so give one that went on a moment to reach
        # the model: its answer comes straight after the search.
        assert not answering.wait(1.0), "the run went on to write an answer"
        assert "generate_answer" not in llm.tasks()
        assert httpx.get(f"{url}/api/sessions").json() == []


def test_sessions_errors_and_delete(server: tuple[str, Deps, ScriptedChatModel]) -> None:
    url, _, _ = server
    assert httpx.get(f"{url}/api/sessions/0123456789abcdef").status_code == 404
    assert httpx.get(f"{url}/api/sessions/bad%20id!").status_code == 422
    assert httpx.get(f"{url}/api/sessions/{'x' * 65}").status_code == 422
    assert httpx.delete(f"{url}/api/sessions/unknown").status_code == 404
    assert chat(url, session_id="not valid!").status_code == 422
    session = chat(url).json()["session_id"]
    assert httpx.delete(f"{url}/api/sessions/{session}").status_code == 204
    assert httpx.get(f"{url}/api/sessions/{session}").status_code == 404
    assert httpx.get(f"{url}/api/sessions").json() == []


def test_feedback_down_removes_the_cached_answer(
    server: tuple[str, Deps, ScriptedChatModel],
) -> None:
    url, deps, _ = server
    body = chat(url).json()
    assert deps.cache.lookup(QUESTION) is not None  # cached under its canonical question
    send = {"session_id": body["session_id"], "turn": 1}
    up = httpx.post(f"{url}/api/feedback", json={**send, "rating": "up"})
    assert up.json() == {"ok": True, "cache_removed": False}
    down = httpx.post(f"{url}/api/feedback", json={**send, "rating": "down"})
    assert down.json() == {"ok": True, "cache_removed": True}
    assert deps.cache.lookup(QUESTION) is None
    assert (
        httpx.post(f"{url}/api/feedback", json={**send, "turn": 9, "rating": "up"}).status_code
        == 404
    )
    unknown = {"session_id": "nosuchsession", "turn": 1, "rating": "up"}
    assert httpx.post(f"{url}/api/feedback", json=unknown).status_code == 404
    wrong = httpx.post(f"{url}/api/feedback", json={**send, "rating": "meh"})
    assert wrong.status_code == 422


@pytest.mark.parametrize(
    ("payload", "status", "says"),
    [
        ({"message": "   "}, 422, "empty"),
        ({"message": "abc\x00def"}, 422, "binary"),
        ({"message": "x" * 9000}, 413, "limit"),
        ({"message": 42}, 422, "string"),
        ({}, 422, "message"),
        ({"message": "hi", "mode": "telepathy"}, 422, "mode"),
    ],
)
def test_bad_messages_get_clear_errors(
    server: tuple[str, Deps, ScriptedChatModel], payload: dict[str, Any], status: int, says: str
) -> None:
    url, _, llm = server
    for path in ("/api/chat", "/api/chat/stream"):
        response = httpx.post(f"{url}{path}", json=payload)
        assert response.status_code == status, response.text
        assert says in response.text.lower()
    assert llm.tasks() == []


def test_malformed_json_and_oversized_bodies(server: tuple[str, Deps, ScriptedChatModel]) -> None:
    url, _, _ = server
    headers = {"content-type": "application/json"}
    broken = httpx.post(f"{url}/api/chat", content=b'{"message": ', headers=headers)
    assert broken.status_code == 422 and "json" in broken.text.lower()
    huge = json.dumps({"message": "y" * 100_000}).encode()
    too_big = httpx.post(f"{url}/api/chat", content=huge, headers=headers)
    assert too_big.status_code == 413 and "limit is 65,536 bytes" in too_big.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit still holds
        yield b'{"message": "'
        for _ in range(20):
            yield b"z" * 5000
        yield b'"}'

    streamed = httpx.post(f"{url}/api/chat", content=chunks(), headers=headers)
    assert streamed.status_code == 413


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, api_rate_per_minute=2)
    with running_app(deps) as url:
        assert chat(url).status_code == 200
        assert chat(url).status_code == 200
        third = chat(url)
        assert httpx.get(f"{url}/api/health").status_code == 200  # health is never limited
    assert third.status_code == 429
    assert 1 <= int(third.headers["retry-after"]) <= 60
    assert "2 per minute" in third.json()["detail"]


class Streamer(threading.Thread):
    """Reads one whole streamed chat in the background (breaking off would disconnect)."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(daemon=True)
        self.url, self.message = url, message
        self.events: list[dict[str, Any]] = []

    def run(self) -> None:
        body = {"message": self.message}
        with httpx.stream("POST", f"{self.url}/api/chat/stream", json=body, timeout=30) as resp:
            self.events = list(sse_events(resp.iter_lines()))


def wait_until_running(url: str, count: int) -> None:
    deadline = time.monotonic() + 10
    while httpx.get(f"{url}/api/health").json()["queue"]["running"] < count:
        assert time.monotonic() < deadline, "the run never took its slot"
        time.sleep(0.02)


def test_full_queue_answers_503_with_retry_after(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, delay=1.5, api_concurrency=1, api_queue=0)
    with running_app(deps) as url:
        busy = Streamer(url, QUESTION)
        busy.start()
        wait_until_running(url, 1)  # the only slot is taken
        refused = chat(url, "What is a venv?")
        started = time.perf_counter()
        assert httpx.get(f"{url}/api/health").status_code == 200
        assert time.perf_counter() - started < 0.5
        busy.join(timeout=30)
    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    assert "busy" in refused.json()["detail"]
    assert busy.events[-1]["event"] == "done"  # the running answer was not disturbed


def test_waiting_stream_reports_its_place_in_line(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, delay=1.0, api_concurrency=1, api_queue=4)
    with running_app(deps) as url:
        first = Streamer(url, QUESTION)
        first.start()
        wait_until_running(url, 1)
        second = Streamer(url, "What is a venv?")
        second.start()
        second.join(timeout=30)
        first.join(timeout=30)
    kinds = [e["event"] for e in second.events if e["event"] != "ping"]
    assert kinds[0] == "queue" and second.events[0]["data"] == {"position": 1}
    assert kinds[-1] == "done" and "queue" not in kinds[1:]
    assert [e["event"] for e in first.events][-1] == "done"


def test_token_is_required_when_set_and_cors_follows_configuration(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path, api_token=SecretStr("s3cret"), cors_origins="https://team.example")
    with running_app(deps) as url:
        assert chat(url).status_code == 401
        assert httpx.get(f"{url}/api/sessions").status_code == 401
        wrong = httpx.get(f"{url}/api/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        good = {"Authorization": "Bearer s3cret"}
        assert httpx.get(f"{url}/api/sessions", headers=good).status_code == 200
        assert httpx.get(f"{url}/api/health").status_code == 200
        allowed = httpx.options(
            f"{url}/api/chat",
            headers={
                "Origin": "https://team.example",
                "Access-Control-Request-Method": "POST",
            },
        )
        assert allowed.headers["access-control-allow-origin"] == "https://team.example"
        other = httpx.get(f"{url}/api/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_page_docs_and_openapi(server: tuple[str, Deps, ScriptedChatModel]) -> None:
    url, _, _ = server
    page = httpx.get(f"{url}/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    script = httpx.get(f"{url}/static/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert script.headers["cache-control"] == "no-cache"
    assert httpx.get(f"{url}/docs").status_code == 200
    paths = httpx.get(f"{url}/openapi.json").json()["paths"]
    assert {"/api/health", "/api/chat", "/api/chat/stream", "/api/feedback"} <= set(paths)
    assert {"/api/sessions", "/api/sessions/{session_id}"} <= set(paths)
