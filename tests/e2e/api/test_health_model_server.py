"""The service behind a remote model server: its health and its run slots follow it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.e2e.api.test_api import app_deps
from tests.servers import running_app

MODEL = "qwen2.5-coder-1.5b"


@pytest.fixture(scope="module")
def model_server() -> Iterator[str]:
    """A stand-in for `codeweaver model serve`: its info route and llama.cpp's model list."""
    app = FastAPI()

    @app.get("/codeweaver/model")
    def info() -> dict[str, Any]:
        return {"model": MODEL, "concurrency": 4, "context": 4096}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        entry = {"id": MODEL, "object": "model", "owned_by": "me", "permissions": []}
        return {"object": "list", "data": [entry]}

    with running_app(app) as url:
        yield url


def health(tmp_path: Path, **settings: Any) -> dict[str, Any]:
    deps, _ = app_deps(tmp_path, model=f"openai:{MODEL}", **settings)
    with running_app(deps) as url:
        body: dict[str, Any] = httpx.get(f"{url}/api/health", timeout=10).json()
    return body


def test_the_queue_takes_the_model_servers_concurrency(tmp_path: Path, model_server: str) -> None:
    body = health(tmp_path, openai_base_url=f"{model_server}/v1")
    assert body["status"] == "ok" and body["problems"] == []
    assert body["model_server"] == {
        "url": f"{model_server}/v1",
        "reachable": True,
        "models": [MODEL],
        "concurrency": 4,
        "error": None,
    }
    assert body["queue"]["concurrency"] == 4  # not the 8 a remote model gets by default


def test_an_explicit_concurrency_overrides_the_server(tmp_path: Path, model_server: str) -> None:
    body = health(tmp_path, openai_base_url=f"{model_server}/v1", api_concurrency=3)
    assert body["model_server"]["concurrency"] == 4
    assert body["queue"]["concurrency"] == 3


def test_an_unreachable_model_server_degrades_health_without_its_credentials(
    tmp_path: Path,
) -> None:
    body = health(tmp_path, openai_base_url="http://alice:s3cret@127.0.0.1:1/v1")
    assert body["status"] == "degraded"
    assert body["model_server"]["reachable"] is False
    assert body["model_server"]["url"] == "http://127.0.0.1:1/v1"
    assert "s3cret" not in str(body)
    assert any("model server" in problem for problem in body["problems"])


def test_a_local_model_has_no_model_server(tmp_path: Path) -> None:
    deps, _ = app_deps(tmp_path)
    with running_app(deps) as url:
        body = httpx.get(f"{url}/api/health", timeout=10).json()
    assert "model_server" not in body
