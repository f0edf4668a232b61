"""The Gradio app, mounted on the real service and driven over loopback by `gradio_client`
(its pieces in process: `tests/unit/ui/test_gradio_app.py`)."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from codeweaver.agent.state import SearchResult
from codeweaver.agent.user_text import say
from codeweaver.api.app import create_app
from codeweaver.api.auth import TokenTable
from codeweaver.api.service import RUN_FAILED, ChatService
from codeweaver.ui.chat_markdown import (
    escape_markdown,
)
from codeweaver.ui.gradio_app import mount_gradio
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

# Gradio's queue statistics use pandas options that pandas 3 deprecates (not ours to fix).
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")

QUESTION = "How do I read a file line by line in Python?"
ANSWER = "Use `open()` and iterate over the file object [1]. <img src=x onerror=alert(1)> [2]."
SCRIPT: dict[str, Any] = {
    "analyze_question": json.dumps(
        {
            "question_type": "new_topic",
            "should_cache": True,
            "canonical_question": "how to read a file line by line in python",
        }
    ),
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}
HOSTILE: SearchResult = {
    **doc(2),
    "title": "<script>alert(1)</script> [x](javascript:alert(1))",
    "url": "javascript:alert(1)",
}


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[object]]:
    """No telemetry, version check or download: any non-loopback connection is refused
    and recorded, so a test can assert that nothing tried to phone home."""
    for name, value in {
        "GRADIO_ANALYTICS_ENABLED": "False",
        "GRADIO_HEARTBEAT_INTERVAL": "0.2",  # the client's heartbeat ends quickly on close
        "GRADIO_TEMP_DIR": str(tmp_path / "gradio"),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    }.items():
        monkeypatch.setenv(name, value)
    attempts: list[object] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        inet = sock.family in (socket.AF_INET, socket.AF_INET6)
        if inet and not ipaddress.ip_address(address[0]).is_loopback:
            attempts.append(address)
            raise OSError("network is disabled in tests")
        connect(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "localhost", "127.0.0.1", "::1", b"127.0.0.1"):
            attempts.append(host)
            raise socket.gaierror("network is disabled in tests")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Messages the app showed with `gr.Warning`."""
    gr = pytest.importorskip("gradio")
    shown: list[str] = []
    original = gr.Warning

    def record(message: str = "", *args: Any, **kwargs: Any) -> Any:
        shown.append(message)
        return original(message, *args, **kwargs)

    monkeypatch.setattr(gr, "Warning", record)
    return shown


def text(message: dict[str, Any]) -> str:
    """A Chatbot message's text, whichever content shape the client returns."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def client(base: str, **kwargs: Any) -> Any:
    gradio_client = pytest.importorskip("gradio_client")
    return gradio_client.Client(
        base + "/gradio/", verbose=False, analytics_enabled=False, download_files=False, **kwargs
    )


def test_chat_streams_records_the_session_and_reloads_it(
    tmp_path: Path, loopback_only: list[object], warnings: list[str]
) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT, [FakeSource(results=[doc(1), HOSTILE])])
    app = mount_gradio(create_app(deps.settings, deps=deps))
    with running_app(app) as base:
        ui = client(base)
        try:
            job = ui.submit(QUESTION, [], api_name="/ask")
            updates = list(job)
            chat, steps, box = job.result()
            both, _, _ = ui.predict("And how do I write one?", chat, api_name="/ask")
            listed = httpx.get(base + "/api/sessions").json()
            loaded, loaded_steps = ui.predict(listed[0]["id"], api_name="/load_session")
            cleared = ui.predict(api_name="/new_session")
            ui.predict("What is a context manager?", [], api_name="/ask")
            relisted = httpx.get(base + "/api/sessions").json()
            unchanged = ui.predict("   ", [], api_name="/ask")
            missing = ui.predict("no-such-session", api_name="/load_session")
        finally:
            ui.close()

    # Streamed: the answer grew token by token before the final answer with its sources.
    partial = [text(u[0][-1]) for u in updates if u[0] and u[0][-1]["role"] == "assistant"]
    assert any(p.startswith("Use `open()`") and p != partial[-1] for p in partial)
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert text(chat[0]) == QUESTION
    final = text(chat[1])
    # Each citation links to its entry under the answer, which links to the source.
    assert final.startswith(
        'Use `open()` and iterate over the file object [[1]](#cw-1-source-1 "doc 1").'
    )
    assert '- <span id="cw-1-source-1"></span>[1] [doc 1](https://docs.example/1)' in final
    # Untrusted text is inert: raw HTML shows as text, the hostile source has no link.
    assert "<img" not in final and "&lt;img" in final
    assert "<script>" not in final and not re.search(r"(?<!\\)\]\(javascript", final)
    assert "[2] \\<script\\>alert(1)\\</script\\> \\[x\\](javascript:alert(1))" in final
    # The steps are the progress lines, in words: no node names.
    assert steps.startswith(f"1. {escape_markdown(say('progress_understanding', 'en'))}\n")
    assert "official" not in steps and box == ""

    # Both questions went to one session of the API's index, loaded back through the UI;
    # "new session" starts another.
    assert [(s["title"], s["messages"]) for s in listed] == [(QUESTION, 4)]
    assert [text(m) for m in both][:3] == [QUESTION, final, "And how do I write one?"]
    assert [text(m) for m in loaded] == [text(m) for m in both] and loaded_steps == ""
    assert cleared[:2] == ([], "")
    assert [s["title"] for s in relisted] == ["What is a context manager?", QUESTION]

    # Errors are warnings, never tracebacks; the chat is left as it was.
    assert unchanged == ([], "", "   ")
    assert missing == ({"__type__": "update"},) * 2  # gr.skip(): nothing replaced
    assert warnings == ["the question is empty", "no session 'no-such-session'"]
    assert loopback_only == []


def test_failed_run_is_a_warning_and_a_chat_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: list[object],
    warnings: list[str],
) -> None:
    async def broken(self: ChatService, *args: Any) -> AsyncIterator[Any]:
        raise RuntimeError("the <b>model</b> is gone")
        yield  # pragma: no cover - makes this an async generator

    monkeypatch.setattr(ChatService, "_run", broken)
    deps, _ = make_deps(tmp_path, SCRIPT)
    app = mount_gradio(create_app(deps.settings, deps=deps))
    with running_app(app) as base:
        ui = client(base)
        try:
            chat, _, _ = ui.predict(QUESTION, [], api_name="/ask")
            again, _, _ = ui.predict("And in Rust?", chat, api_name="/ask")
        finally:
            ui.close()
    # The exception's text stays in the server's log; the user is told what happened.
    shown = f"**Error:** {escape_markdown(RUN_FAILED)}"
    assert [text(m) for m in chat] == [QUESTION, shown]
    assert warnings == [RUN_FAILED] * 2
    assert "model" not in RUN_FAILED
    # The slot was given back: the next question ran (and failed) too.
    assert [text(m) for m in again] == [QUESTION, shown, "And in Rust?", shown]
    assert loopback_only == []


def test_token_is_the_login_password(tmp_path: Path, loopback_only: list[object]) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT)
    tokens = TokenTable.from_pairs({"s3cret": "default"})
    app = mount_gradio(create_app(deps.settings, deps=deps), tokens=tokens)
    with running_app(app) as base:
        with pytest.raises(ValueError, match="Could not login"):  # 400 Incorrect credentials
            client(base, auth=("default", "wrong"))
        with pytest.raises(ValueError, match="Could not login"):  # the token is not "me"'s
            client(base, auth=("me", "s3cret"))
        ui = client(base, auth=("default", "s3cret"))
        try:
            chat, _, _ = ui.predict(QUESTION, [], api_name="/ask")
        finally:
            ui.close()
        assert httpx.get(base + "/gradio/config").status_code == 401
    assert text(chat[-1]).startswith("Use `open()`")
    assert loopback_only == []


def test_the_librarian_mode_can_be_chosen(tmp_path: Path, loopback_only: list[object]) -> None:
    decide = [
        json.dumps({"thought": "look it up", "tool": "search_official_docs", "input": "read"}),
        json.dumps({"thought": "enough", "tool": "answer", "input": ""}),
    ]
    script = {
        **SCRIPT,
        "librarian_step": decide,
        "librarian_answer": "Iterate over it [1].",
        "check_answer": '{"unsupported": [], "answers_question": true}',
    }
    deps, llm = make_deps(tmp_path, script, [FakeSource()])
    app = mount_gradio(create_app(deps.settings, deps=deps))
    with running_app(app) as base:
        ui = client(base)
        try:
            chat, steps, _ = ui.predict(QUESTION, [], "librarian", api_name="/ask")
        finally:
            ui.close()
    assert llm.tasks().count("librarian_step") == 2
    assert "generate_answer" not in llm.tasks()
    assert text(chat[-1]).startswith('Iterate over it [[1]](#cw-1-source-1 "doc 1").')
    assert steps.startswith("1. Understanding the question")
    assert "librarian" not in steps and "search" not in steps.split("\n")[0]
    assert loopback_only == []


def test_each_login_sees_only_its_own_sessions(
    tmp_path: Path, loopback_only: list[object], warnings: list[str]
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-secret\nbob bob-secret\n")
    deps, _ = make_deps(tmp_path, SCRIPT, api_tokens=tokens)
    app = mount_gradio(create_app(deps.settings, deps=deps))  # the API's users log in
    with running_app(app) as base:
        alice = client(base, auth=("alice", "alice-secret"))
        bob = client(base, auth=("bob", "bob-secret"))
        try:
            alice.predict(QUESTION, [], api_name="/ask")
            mine = httpx.get(
                base + "/api/sessions", headers={"Authorization": "Bearer alice-secret"}
            ).json()
            theirs = bob.predict(mine[0]["id"], api_name="/load_session")
            listed_for_bob = bob.predict(None, api_name="/list_sessions")
            listed_for_alice = alice.predict(None, api_name="/list_sessions")
        finally:
            alice.close()
            bob.close()
    assert [s["title"] for s in mine] == [QUESTION]
    assert theirs == ({"__type__": "update"},) * 2  # bob cannot load alice's session
    assert warnings == [f"no session {mine[0]['id']!r}"]
    assert listed_for_bob["choices"] == []
    assert [value for _, value in listed_for_alice["choices"]] == [mine[0]["id"]]
    assert loopback_only == []
