"""`codeweaver serve` and the CLI on one data directory, at the same time.

Local Qdrant opens a folder in one process at a time; the two processes hand the
semantic cache's store to each other, so both see and serve the same cached answers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port

EXE = Path(sys.executable).with_name("codeweaver")
QUESTION = "How do I read a file line by line in Python?"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # The installed-docs index in the user cache is reused (built by `codeweaver setup`).
    return {
        **os.environ,
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "installed_docs",
        "CODEWEAVER_CACHE_MODE": "semantic",
    }


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [str(EXE), "serve", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=30)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env, timeout=120)


def nodes(answer: dict[str, object]) -> list[str]:
    return [str(s["node"]) for s in answer["steps"]]  # type: ignore[attr-defined, index]


def test_server_and_cli_share_the_cache(server: str, env: dict[str, str]) -> None:
    first = httpx.post(f"{server}/api/chat", json={"message": QUESTION}, timeout=120).json()
    # Written by the model, not served from the cache. (The echo model's answer uses no
    # API, so no installed-docs page is cited: `sources` is empty by design.)
    assert "generate_answer" in nodes(first) and "return_cached_answer" not in nodes(first)
    # The server holds the store; the CLI asks for it and reads the entry the server wrote.
    listed = cli(env, "cache", "list")
    assert listed.returncode == 0, listed.stderr
    assert QUESTION in listed.stdout
    # The server takes the store back for a paraphrase, and serves the cached answer.
    again = httpx.post(
        f"{server}/api/chat",
        json={"message": "how to read a file line by line in python"},
        timeout=120,
    ).json()
    assert nodes(again)[-1] == "return_cached_answer"
    assert again["answer"] == first["answer"]
    # And the CLI's own question is answered from the same cache.
    asked = cli(env, "ask", QUESTION, "--json")
    assert asked.returncode == 0, asked.stderr
    assert '"return_cached_answer"' in asked.stdout
