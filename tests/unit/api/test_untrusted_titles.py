"""A source title carrying ESC, BEL, markup and a right-to-left override is inert in the
HTTP API's JSON: the answer, its stream's `done` event and the session history all give
it cleaned, and the rendered HTML escapes its markup."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from codeweaver.llm.scripted import echo_model
from codeweaver.vocabulary import SearchResult
from tests.fakes import FakeSource, make_deps
from tests.servers import app_client

QUESTION = "How do I read a file line by line in Python?"
TITLE = "files.md\x1b]0;HIJACK\x07\x1b[31m <img src=x onerror=alert(1)> \u202eevil\u202c"
CLEAN = "files.md <img src=x onerror=alert(1)> evil"
KB_DOC: SearchResult = {
    "title": TITLE,
    "url": "https://wiki.example/files\x1b[31m#L1",
    "snippet": "To read a file line by line in Python, iterate over the file object.",
    "source": "knowledge_base",
    "score": 0.9,
    "attribution": "team\x07 wiki",
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp: Path = tmp_path_factory.mktemp("titles")
    deps, _ = make_deps(
        tmp,
        dict(echo_model().script),
        sources=[FakeSource("knowledge_base", results=[KB_DOC])],
        api_rate_per_minute=1000,
        cache_enabled=False,
    )
    with app_client(deps) as client:
        yield client


def _inert(payload: Any) -> None:
    text = json.dumps(payload, ensure_ascii=False)
    for bad in ("\x1b", "\x07", "HIJACK", "\u202e", "\u202c"):
        assert bad not in text


def test_the_answer_json_gives_the_title_cleaned(service: TestClient) -> None:
    body = service.post("/api/chat", json={"message": QUESTION}).json()
    (source,) = body["sources"]
    assert source["title"] == CLEAN and source["url"] == "https://wiki.example/files#L1"
    assert source["attribution"] == "team wiki" and source["label"] == "knowledge base"
    _inert(body["sources"])
    history = service.get(f"/api/sessions/{body['session_id']}").json()
    _inert(history["history"][1]["sources"])
    assert history["history"][1]["sources"][0]["title"] == CLEAN


def test_the_stream_done_event_gives_the_title_cleaned(service: TestClient) -> None:
    with service.stream("POST", "/api/chat/stream", json={"message": QUESTION}) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    done = json.loads(lines[-1][6:])
    assert done["sources"][0]["title"] == CLEAN
    _inert(done["sources"])
    _inert(done["progress"])
    assert "<img" not in done["html"]  # the answer's HTML is sanitised
