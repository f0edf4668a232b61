"""`codeweaver serve` mounts `/mcp` beside the API (`/mcp` over a real loopback server:
`tests/e2e/mcp_server/test_http.py`)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest


def test_codeweaver_serve_mounts_mcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from codeweaver.cli.app import app as cli

    served: list[Any] = []
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.chdir(tmp_path)
    import uvicorn

    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self, sockets=None: served.append(self.config.app)
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(cli, ["serve", "--port", str(port)])
    assert result.exit_code == 0, result.output
    mounted = {getattr(route, "path", None) for route in served[0].routes}
    # Routers are included lazily (FastAPI lists them as one entry each, without a path):
    # their routes are read from the schema the app serves.
    routed = set(served[0].openapi()["paths"])
    assert "/mcp" in mounted
    assert "/api/chat" in routed
