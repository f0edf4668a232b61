"""Sessions survive a restart and a `kill -9` mid-answer, on SQLite and on PostgreSQL.

The PostgreSQL runs use the server on 127.0.0.1:5432 (database `test`, trust auth); the
README says how to start one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.scripted_server import SLOW_MARK
from tests.services import postgres_url

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def backend_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO)
    if request.param == "postgresql":
        env["DATABASE_URL"] = postgres_url()
    yield env


class Server:
    """`tests.integration.scripted_server` as a separate process."""

    def __init__(self, data: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.scripted_server", str(data)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        assert line[:1] == ["READY"], f"server did not start: {line}"
        self.url = line[1]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=20)


def ask(url: str, message: str, session: str) -> dict[str, object]:
    response = httpx.post(
        f"{url}/api/chat", json={"message": message, "session_id": session}, timeout=60
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def history(url: str, session: str) -> list[dict[str, object]]:
    response = httpx.get(f"{url}/api/sessions/{session}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["history"]  # type: ignore[no-any-return]


def test_sessions_survive_a_restart(tmp_path: Path, backend_env: dict[str, str]) -> None:
    session = f"restart-{uuid.uuid4().hex[:12]}"
    server = Server(tmp_path, backend_env)
    try:
        assert ask(server.url, "How do I read a file line by line?", session)["turn"] == 1
    finally:
        server.stop()
    server = Server(tmp_path, backend_env)
    try:
        before = history(server.url, session)
        assert [m["content"] for m in before][:1] == ["How do I read a file line by line?"]
        assert len(before) == 2
        assert ask(server.url, "And how do I skip blank lines?", session)["turn"] == 2
        assert len(history(server.url, session)) == 4
    finally:
        httpx.delete(f"{server.url}/api/sessions/{session}", timeout=10)
        server.stop()


def test_kill_9_mid_answer_loses_no_earlier_turn(
    tmp_path: Path, backend_env: dict[str, str]
) -> None:
    session = f"kill-{uuid.uuid4().hex[:12]}"
    other = f"kill-other-{uuid.uuid4().hex[:12]}"
    server = Server(tmp_path, backend_env)
    try:
        ask(server.url, "How do I read a file line by line?", session)
        ask(server.url, "What is a virtual environment?", other)

        def slow() -> None:
            body = {"message": "SLOW: how do I parse JSON?", "session_id": session}
            try:
                with httpx.stream(
                    "POST", f"{server.url}/api/chat/stream", json=body, timeout=120
                ) as response:
                    for _ in response.iter_lines():
                        pass
            except httpx.HTTPError:
                pass  # the server dies under it

        threading.Thread(target=slow, daemon=True).start()
        # Killed while the answer is being written: searching done, the model mid-answer.
        mark = tmp_path / SLOW_MARK
        deadline = time.monotonic() + 20
        while not mark.exists():
            assert time.monotonic() < deadline, "the slow answer never started"
            time.sleep(0.05)
    finally:
        server.kill()
    server = Server(tmp_path, backend_env)
    try:
        kept = history(server.url, session)
        assert [m["role"] for m in kept] == ["user", "assistant"]
        assert kept[0]["content"] == "How do I read a file line by line?"
        assert kept[1]["content"] == "Iterate over the file object [1]."
        assert len(history(server.url, other)) == 2
        # The thread still works after the interrupted run.
        assert ask(server.url, "How do I write a file?", session)["turn"] == 2
    finally:
        for name in (session, other):
            httpx.delete(f"{server.url}/api/sessions/{name}", timeout=10)
        server.stop()
