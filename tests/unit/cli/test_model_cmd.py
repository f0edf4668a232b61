"""`codeweaver model serve`: bad input fails fast with exit code 2, before any weights load."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver.cli.model_cmd import KEY_ENV, BindingError, base_url, ready_lines, server_key
from codeweaver.llm.model_server import ServedModel


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))  # no weights here
    for name in ("CODEWEAVER_MODEL", KEY_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["model", "serve", "--port", str(free_port()), *args])
    return result.exit_code, " ".join(result.stderr.split())


def test_a_provider_that_is_not_local_is_refused() -> None:
    code, err = serve("--model", "openai:gpt-4o")
    assert code == 2
    assert "runs a local model" in err and "'openai:gpt-4o'" in err


def test_an_unknown_local_model_is_refused() -> None:
    code, err = serve("--model", "local:llama-70b")
    assert code == 2 and "unknown local model 'llama-70b'" in err


def test_a_port_in_use_is_refused_before_loading(busy_port: int) -> None:
    result = CliRunner().invoke(app, ["model", "serve", "--port", str(busy_port)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{busy_port}" in result.stderr


def test_listening_off_loopback_needs_a_key() -> None:
    code, err = serve("--host", "0.0.0.0")
    assert code == 2 and f"refusing to listen on 0.0.0.0 without {KEY_ENV}" in err


def test_server_key_rules() -> None:
    assert server_key("127.0.0.1", None) is None
    assert server_key("localhost", SecretStr(" short ")) == "short"  # loopback: any key
    assert server_key("::1", None) is None
    with pytest.raises(BindingError, match="at least 16"):
        server_key("10.0.0.5", SecretStr("short"))
    assert server_key("0.0.0.0", SecretStr("x" * 16)) == "x" * 16


def test_ready_lines_are_what_a_replica_sets() -> None:
    model = ServedModel("qwen2.5-coder-1.5b", Path("/m/q.gguf"), 4096, 2, slots=4)
    lines = ready_lines(model, base_url("127.0.0.1", 8001), keyed=False)
    assert "(4 answers at once, others queue)" in lines[0]
    assert lines[1:] == [
        "CODEWEAVER_MODEL=openai:qwen2.5-coder-1.5b",
        "OPENAI_BASE_URL=http://127.0.0.1:8001/v1",
    ]
    assert base_url("::1", 9000) == "http://[::1]:9000/v1"
    keyed = ready_lines(model, base_url("0.0.0.0", 8001), keyed=True)
    assert keyed[2] == f"OPENAI_BASE_URL=http://{socket.gethostname()}:8001/v1"
    assert KEY_ENV in keyed[3]


def test_help_imports_neither_the_server_nor_uvicorn() -> None:
    code = (
        "import sys\n"
        "from codeweaver.cli.app import app\n"
        "try:\n    app(['model', 'serve', '--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('xllamacpp', 'uvicorn', 'fastapi', 'starlette') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "--port" in out.stdout and "--host" in out.stdout


def test_serve_refuses_a_port_in_use_before_building_the_app(busy_port: int) -> None:
    code = (
        "import sys\n"
        "from codeweaver.cli.app import main\n"
        f"sys.argv = ['codeweaver', 'serve', '--port', '{busy_port}']\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print(code, [m for m in ('langgraph', 'uvicorn', 'xllamacpp') if m in sys.modules])"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert f"cannot listen on 127.0.0.1:{busy_port}" in " ".join(done.stderr.split())
    assert done.stdout.strip().splitlines()[-1] == "2 []"
