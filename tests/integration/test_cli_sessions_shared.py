"""The command line's conversations are the service's sessions: on one data folder, the
API lists and reads what `ask --thread` asked, and `ask --thread` continues what the API
started, with its history, as the user a server without tokens serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from codeweaver.api.app import create_app
from codeweaver.cli.app import app as cli
from codeweaver.config import Settings
from tests.servers import app_client

ALICE_TOKEN = "alice-token-0123456789abcdef"
DEFAULT_TOKEN = "default-token-0123456789abcdef"


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One data folder for both doors, a scripted model, no source (no network)."""
    for name in ("DATABASE_URL", "CODEWEAVER_REDIS_URL", "CODEWEAVER_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CODEWEAVER_API_TOKENS", raising=False)
    values = {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "none",
        "CODEWEAVER_CACHE": "false",  # every answer is the model's, each time
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path / "data"


def ask(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["ask", *args, "--json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def test_the_api_lists_and_reads_what_ask_thread_asked(data: Path) -> None:
    first = ask("What is a venv?", "--thread", "cli-t1")
    second = ask("Then show me an example", "--thread", "cli-t1")
    assert first["thread_id"] == second["thread_id"] == "cli-t1"
    assert second["question_type"] == "clarification"  # the first turn is in its memory
    with app_client(create_app(Settings())) as api:
        listed = api.get("/api/sessions")
        session = api.get("/api/sessions/cli-t1")
    assert listed.status_code == 200 and session.status_code == 200
    assert [(s["id"], s["title"], s["messages"]) for s in listed.json()] == [
        ("cli-t1", "What is a venv?", 4)
    ]
    history = [(m["role"], m["content"]) for m in session.json()["history"]]
    assert history == [
        ("user", "What is a venv?"),
        ("assistant", first["answer"]),
        ("user", "Then show me an example"),
        ("assistant", second["answer"]),
    ]
    assert "Scripted answer to: What is a venv?" in first["answer"]


def test_ask_thread_continues_a_conversation_started_on_the_api(data: Path) -> None:
    with app_client(create_app(Settings())) as api:
        started = api.post("/api/chat", json={"message": "What is a venv?"})
    assert started.status_code == 200, started.text
    session = started.json()["session_id"]
    continued = ask("Then show me an example", "--thread", session)
    fresh = ask("Then show me an example", "--thread", "cli-fresh")
    assert continued["thread_id"] == session
    # The API's turn is in the thread's memory: the same words start a new topic elsewhere.
    assert continued["question_type"] == "clarification"
    assert fresh["question_type"] == "new_topic"
    with app_client(create_app(Settings())) as api:
        history = api.get(f"/api/sessions/{session}").json()["history"]
        ids = {s["id"] for s in api.get("/api/sessions").json()}
    assert [(m["role"], m["turn"]) for m in history] == [
        ("user", 1),
        ("assistant", 1),
        ("user", 2),
        ("assistant", 2),
    ]
    assert history[2]["content"] == "Then show me an example"
    assert history[3]["content"] == continued["answer"]
    assert ids == {session, "cli-fresh"}


def test_the_command_line_is_the_default_user_of_a_server_with_tokens(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE_TOKEN}\n", encoding="utf-8")
    monkeypatch.setenv("CODEWEAVER_API_TOKEN", DEFAULT_TOKEN)
    monkeypatch.setenv("CODEWEAVER_API_TOKENS", str(tokens))
    ask("What is a venv?", "--thread", "cli-mine")
    with app_client(create_app(Settings())) as api:
        alice = {"Authorization": f"Bearer {ALICE_TOKEN}"}
        default = {"Authorization": f"Bearer {DEFAULT_TOKEN}"}
        hers = api.post("/api/chat", json={"message": "What is pip?"}, headers=alice).json()
        mine = [s["id"] for s in api.get("/api/sessions", headers=default).json()]
        her_list = [s["id"] for s in api.get("/api/sessions", headers=alice).json()]
    assert mine == ["cli-mine"] and her_list == [hers["session_id"]]
    # Her conversation is hers: the command line neither reads nor continues it.
    refused = CliRunner().invoke(cli, ["ask", "And then?", "--thread", hers["session_id"]])
    assert refused.exit_code == 2
    assert "is another user's" in " ".join(refused.stderr.split())
    with app_client(create_app(Settings())) as api:
        history = api.get(f"/api/sessions/{hers['session_id']}", headers=alice).json()
    assert [m["content"] for m in history["history"] if m["role"] == "user"] == ["What is pip?"]
