"""`codeweaver model serve` with the real local model, and `ask` in another process using it
as `openai:<alias>` through `OPENAI_BASE_URL`, with no OpenAI key."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from codeweaver.config import Settings
from codeweaver.llm.registry import create_chat_model
from codeweaver.llm.structured import ainvoke_structured

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ALIAS = "qwen2.5-coder-1.5b"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def clean_env(data: Path) -> dict[str, str]:
    """Offline sources, empty threads and cache; weights and docs index from the user cache."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEWEAVER_MODEL", "LLM_PROVIDER"}
    }
    env.update(CODEWEAVER_DATA_DIR=str(data), CODEWEAVER_SOURCES="installed_docs,python_docs")
    return env


@pytest.fixture
def model_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "codeweaver", "model", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=clean_env(tmp_path / "server-data"),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, stopped whole below
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(f"{url}/v1/models", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "model server not ready in 120 s"
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()
    printed = (tmp_path / "server.log").read_text()
    assert f"CODEWEAVER_MODEL=openai:{ALIAS}" in printed, printed
    assert f"OPENAI_BASE_URL={url}/v1" in printed, printed


class Colour(BaseModel):
    colour: str


def test_ask_in_another_process_answers_on_the_shared_model(
    model_server: str, tmp_path: Path
) -> None:
    info = httpx.get(f"{model_server}/codeweaver/model", timeout=5).json()
    assert info["model"] == ALIAS and info["concurrency"] == Settings().model_server_slots, info
    assert isinstance(info["context"], int) and info["context"] >= 2048, info
    listed = httpx.get(f"{model_server}/v1/models", timeout=5).json()
    assert [m["id"] for m in listed["data"]] == [ALIAS]

    # A decision decodes under its schema, as in process: asked for one word, the model
    # still answers with the JSON the schema describes.
    llm = create_chat_model(f"openai:{ALIAS}", Settings(openai_base_url=f"{model_server}/v1"))
    ask = [SystemMessage("Answer in one word."), HumanMessage("What colour is a clear sky?")]
    decided = asyncio.run(ainvoke_structured(llm, ask, Colour, Colour(colour="?")))
    assert decided.ok and decided.raw.lstrip().startswith("{"), decided

    # A grammar too large to build is refused with a 4xx, and the server keeps answering
    # (the previous runtime crashed on this one, stopping every replica's answers).
    chat = {"model": ALIAS, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4}
    huge = {"type": "array", "items": {"type": "string"}, "maxItems": 2000}
    refused = httpx.post(
        f"{model_server}/v1/chat/completions",
        json={**chat, "response_format": {"type": "json_schema", "json_schema": {"schema": huge}}},
        timeout=30,
    )
    assert refused.status_code == 400, refused.text
    still = httpx.post(f"{model_server}/v1/chat/completions", json=chat, timeout=60)
    assert still.status_code == 200 and still.json()["choices"][0]["message"]["content"]

    env = clean_env(tmp_path / "replica-data")
    env.update(CODEWEAVER_MODEL=f"openai:{ALIAS}", OPENAI_BASE_URL=f"{model_server}/v1")
    question = "How do I read a file line by line in Python?"
    done = subprocess.run(
        [sys.executable, "-m", "codeweaver", "ask", question, "--json", "--no-cache"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    answer = result["answer"]
    assert "open(" in answer, answer
    assert re.search(r"for \w+ in \w+|readline", answer), answer
    assert result["sources"], result
    assert any(s["source"] == "installed_docs" for s in result["sources"]), result["sources"]
