"""The MCP server driven by a second MCP implementation: the official TypeScript SDK's
client (`tests/e2e/mcp_ts/client.mjs`), over stdio (it spawns `codeweaver mcp` itself)
and over streamable HTTP (`/mcp`, with a bearer token).

That client checks each result's `structuredContent` against the tool's `outputSchema`
(Ajv) and fails the call when it does not match; here the same content is checked again
with `jsonschema`, and the tools it lists are the ones the Python SDK lists.
Its dependencies come from the lock file: `npm ci --prefix tests/e2e/mcp_ts` (scripts/test.sh).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from jsonschema.validators import validator_for  # type: ignore[import-untyped]
from mcp import Client
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.mcp_server.http import McpExtension
from tests.e2e.mcp_server.test_stdio import parameters
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.unit.mcp_server.helpers import ANSWER, SCRIPT

CLIENT_DIR = Path(__file__).resolve().parent / "mcp_ts"
CLIENT = CLIENT_DIR / "client.mjs"
SDK = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"
INSTALL = "npm ci --prefix tests/e2e/mcp_ts"
QUESTION = "How do I read a file line by line in Python?"
TOKEN = "ts-client-token-0123456789"
# What the TypeScript SDK asks for (its LATEST_PROTOCOL_VERSION) and the server grants.
PROTOCOL_VERSION = "2025-11-25"


def node() -> str:
    """The `node` command; the test fails, never skips, when it or the SDK is missing."""
    exe = shutil.which("node")
    if exe is None:
        pytest.fail(f"`node` is not on PATH: install Node.js 20 or later, then run `{INSTALL}`")
    if not SDK.is_dir():
        pytest.fail(f"{SDK.parent.parent} is missing: run `{INSTALL}` (scripts/test.sh does)")
    return exe


def run_client(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node(), str(CLIENT), "--question", QUESTION, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=90,
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, f"the TypeScript client failed:\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["problems"] == []
    return report


def valid(schema: dict[str, Any], content: object) -> dict[str, Any]:
    """`content`, once `jsonschema` has found it valid against `schema`."""
    validator = validator_for(schema)
    validator.check_schema(schema)
    assert [e.message for e in validator(schema).iter_errors(content)] == []
    assert isinstance(content, dict)
    return content


def check_tools(report: dict[str, Any], python_tools: list[Any]) -> None:
    """The TypeScript client sees the tools and output schemas the Python SDK sees."""
    assert report["tools"] == [t.name for t in python_tools]
    assert report["without_output_schema"] == []
    assert report["with_output_schema"] == report["tools"]
    assert report["output_schemas"] == {t.name: t.output_schema for t in python_tools}
    assert report["protocol_version"] == PROTOCOL_VERSION
    assert report["server"]["name"] == "codeweaver"


def check_ask(report: dict[str, Any], answer: str) -> dict[str, Any]:
    """`ask`'s structured content: valid, and carrying the answer, sources and session."""
    ask = report["ask"]
    assert not ask["is_error"], ask["text"]
    structured = valid(report["output_schemas"]["ask"], ask["structured_content"])
    assert ask["extra_field_rejected"] is True  # the SDK's validator does check
    assert structured["answer"].startswith(answer) and structured["answer"] in ask["text"]
    assert structured["sources"] and structured["sources"][0]["cited"] is True
    assert structured["sources"][0]["url"] in ask["text"]
    assert structured["session_id"] and f"Session: {structured['session_id']} " in ask["text"]
    assert any(line.startswith("Searching ") for line in ask["progress"]), ask["progress"]
    return structured


async def test_the_typescript_client_drives_the_stdio_server(tmp_path: Path) -> None:
    node()  # fails at once when the client cannot run
    server = parameters(tmp_path)
    assert server.env is not None
    with (tmp_path / "python-sdk.log").open("w") as errlog:
        async with Client(stdio_client(server, errlog=errlog), mode="legacy") as client:
            python_tools = (await client.list_tools()).tools

    # The environment the Python SDK gives the server; the TypeScript client passes on its own.
    env = {**get_default_environment(), **server.env}
    command = ["--", server.command, *server.args]
    done = await asyncio.to_thread(
        run_client, ["--search", "search_code=read_lines", *command], env, tmp_path
    )
    report = report_of(done)

    assert report["transport"] == "stdio"
    assert report["tools"] == ["ask", "search_docs", "search_code"]
    check_tools(report, python_tools)
    structured = check_ask(report, f"Scripted answer to: {QUESTION} [1]")
    assert structured["sources"][0]["url"].startswith("https://docs.python.org/")
    assert structured["language"] == "en"

    code = report["searches"]["search_code"]
    found = valid(report["output_schemas"]["search_code"], code["structured_content"])
    assert [r["title"] for r in found["results"]] == ["lines.py:1 — read_lines"]
    assert found["results"][0]["snippet"] in code["text"]


async def test_the_typescript_client_drives_mcp_over_http_with_a_token(tmp_path: Path) -> None:
    node()
    deps, _ = make_deps(tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1), doc(2)])])
    deps.settings = deps.settings.model_copy(
        update={"api_rate_per_minute": 1000, "api_token": SecretStr(TOKEN)}
    )
    app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
    env = get_default_environment()
    with running_app(app) as base:
        url = f"{base}/mcp"
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=bearer, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            python_tools = (await client.list_tools()).tools
        args = ["--search", "search_docs=open a file", "--url", url]
        refused = await asyncio.to_thread(run_client, args, env, tmp_path)
        env["CODEWEAVER_MCP_TOKEN"] = TOKEN
        done = await asyncio.to_thread(run_client, args, env, tmp_path)

    assert refused.returncode != 0, refused.stdout
    assert "missing or wrong bearer token" in refused.stderr, refused.stderr
    report = report_of(done)
    assert report["transport"] == "streamable-http"
    check_tools(report, python_tools)
    check_ask(report, ANSWER)
    docs = report["searches"]["search_docs"]
    found = valid(report["output_schemas"]["search_docs"], docs["structured_content"])
    assert [r["url"] for r in found["results"]] == [
        "https://docs.example/1",
        "https://docs.example/2",
    ]
