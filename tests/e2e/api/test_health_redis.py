"""`/api/health` on a real loopback server follows its dependencies: with Redis gone,
health is `degraded` and names Redis (every chat gets 503 meanwhile), and `ok` once it is
back."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.e2e.api.test_api import QUESTION, app_deps
from tests.servers import free_port, running_app

REDIS_SERVER = shutil.which("redis-server")
pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(REDIS_SERVER is None, reason="needs redis-server on PATH"),
]


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class ThrowawayRedis:
    """A Redis of the test's own, to stop and start (the shared one must not be stopped)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert REDIS_SERVER is not None
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self._process = subprocess.Popen(
            [REDIS_SERVER, *options, "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: answers(self.port), "Redis to start")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None


@pytest.fixture
def redis() -> Iterator[ThrowawayRedis]:
    server = ThrowawayRedis()
    server.start()
    yield server
    server.stop()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.1)


def health(url: str) -> dict[str, Any]:
    started = time.perf_counter()
    body: dict[str, Any] = httpx.get(f"{url}/api/health", timeout=5).json()
    assert time.perf_counter() - started < 0.5  # a live check never holds health up
    return body


def test_health_names_redis_while_it_is_down(tmp_path: Path, redis: ThrowawayRedis) -> None:
    deps, _ = app_deps(tmp_path, redis_url=SecretStr(redis.url))
    # The app checks Redis when it starts, so it starts while Redis is up.
    with running_app(deps) as url:
        wait_for(lambda: health(url)["status"] == "ok", "the service to start")

        redis.stop()
        seen: list[dict[str, Any]] = []

        def degraded() -> bool:
            seen.append(health(url))
            return bool(seen[-1]["status"] != "ok")

        wait_for(degraded, "health to say Redis is down")
        down = seen[-1]
        assert down["status"] == "degraded"
        assert any("Redis at CODEWEAVER_REDIS_URL" in p for p in down["problems"]), down
        assert down["dependencies"]["redis"]["reachable"] is False
        # That is what every chat meets meanwhile.
        chat = httpx.post(f"{url}/api/chat", json={"message": QUESTION}, timeout=30)
        assert chat.status_code == 503

        redis.start()
        wait_for(lambda: health(url)["status"] == "ok", "health to recover")
        assert health(url)["problems"] == []


def test_health_lists_its_dependencies_when_all_answer(
    tmp_path: Path, redis: ThrowawayRedis
) -> None:
    deps, _ = app_deps(tmp_path, redis_url=SecretStr(redis.url))
    with running_app(deps) as url:
        wait_for(lambda: "dependencies" in health(url), "the first live check")
        body = health(url)
    assert body["status"] == "ok" and body["problems"] == []
    assert body["dependencies"] == {
        "redis": {"name": "Redis at CODEWEAVER_REDIS_URL", "reachable": True, "error": None},
        "threads": {"name": "the thread store (sqlite)", "reachable": True, "error": None},
    }
