"""`codeweaver doctor` asks the model server an `openai:` model is reached at."""

from __future__ import annotations

from pathlib import Path

import pytest
import respx

from codeweaver.cli.doctor import _model_report
from tests.fakes import make_settings

MODEL_SERVER = "http://models.example:8001"


@pytest.fixture
def model_server(api: respx.MockRouter) -> str:
    """`codeweaver model serve`'s info route, as it answers."""
    info = {"model": "qwen2.5-coder-1.5b", "concurrency": 1, "context": 4096}
    api.get(f"{MODEL_SERVER}/codeweaver/model").respond(200, json=info)
    return MODEL_SERVER


def test_a_reachable_server_is_named_with_what_it_serves(tmp_path: Path, model_server: str) -> None:
    settings = make_settings(
        tmp_path, model="openai:qwen2.5-coder-1.5b", openai_base_url=f"{model_server}/v1"
    )
    report = _model_report(settings)
    assert report["server"] == f"{model_server}/v1: serves qwen2.5-coder-1.5b, 1 answer at once"


def test_an_unreachable_server_says_why_without_its_credentials(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, model="openai:m", openai_base_url="http://bob:hunter2@127.0.0.1:1/v1"
    )
    server = _model_report(settings)["server"]
    assert server.startswith("http://127.0.0.1:1/v1: not reachable (cannot connect")
    assert "hunter2" not in server


def test_a_local_model_has_no_server(tmp_path: Path) -> None:
    assert "server" not in _model_report(make_settings(tmp_path, model="scripted:echo"))
