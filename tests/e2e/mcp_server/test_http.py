"""`/mcp` on a real loopback server: the SDK's streamable-HTTP client, tokens, Host check."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, TextContent
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.mcp_server.http import McpExtension
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.unit.mcp_server.helpers import ANSWER, QUESTION, SCRIPT

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream"}


@contextmanager
def serve(tmp_path: Path, **settings: Any) -> Iterator[str]:
    deps, _ = make_deps(tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1), doc(2)])])
    deps.settings = deps.settings.model_copy(update={"api_rate_per_minute": 1000, **settings})
    app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
    with running_app(app) as url:
        yield url


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with serve(tmp_path) as base:
        yield base


def text_of(result: Any) -> str:
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def test_the_sdk_client_lists_tools_and_asks_over_http(url: str) -> None:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with Client(f"{url}/mcp", mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"ask", "search_docs", "search_github", "search_code"} <= names
        result = await client.call_tool(
            "ask", {"question": QUESTION}, progress_callback=on_progress
        )
        docs = await client.call_tool("search_docs", {"query": "open a file"})
    assert not result.is_error and text_of(result).startswith(ANSWER)
    assert "[1] doc 1 — https://docs.example/1 (installed docs)" in text_of(result)
    assert "Searching installed docs…" in seen and "search_official_docs" not in str(seen)
    assert text_of(docs).startswith("[1] doc 1 (installed_docs)\nurl: https://docs.example/1")
    # The API still answers beside it.
    assert httpx.get(f"{url}/api/health").json()["status"] == "ok"


async def test_the_default_auto_mode_works_too(url: str) -> None:
    async with Client(f"{url}/mcp") as client:
        result = await client.call_tool("search_docs", {"query": "open a file"})
    assert not result.is_error and "reference: python:doc1@3.11" in text_of(result)


def test_no_event_stream_is_offered(url: str) -> None:
    """Without sessions nothing could ever be sent on the GET stream for server-initiated
    messages, so it is refused rather than held open."""
    answer = httpx.get(f"{url}/mcp", headers={"Accept": "text/event-stream"}, timeout=10)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"


def test_a_foreign_host_name_is_refused(url: str) -> None:
    answer = httpx.post(
        f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, "Host": "attacker.example"}
    )
    assert answer.status_code == 421
    page = httpx.post(
        f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, "Origin": "https://evil.example"}
    )
    assert page.status_code == 403


async def test_tokens_guard_mcp_like_the_api(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token-0123456789\n")
    with serve(tmp_path, api_token=SecretStr("s3cret-token"), api_tokens=tokens) as url:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "s3cret-token"}):
            refused = httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, **headers})
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == "Bearer"
            assert refused.json() == {"detail": "missing or wrong bearer token"}
        with pytest.raises(Exception):  # noqa: B017 - the SDK reports the 401 its own way
            async with Client(f"{url}/mcp", mode="legacy") as client:
                await client.list_tools()

        bearer = {"Authorization": "Bearer alice-token-0123456789"}
        async with (
            httpx2.AsyncClient(headers=bearer, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
        ):
            result = await client.call_tool("ask", {"question": QUESTION})
        assert not result.is_error
        session = text_of(result).split("Session: ", 1)[1].split()[0]
        # The session belongs to the token's user, as through the API.
        mine = httpx.get(f"{url}/api/sessions", headers=bearer).json()
        theirs = httpx.get(
            f"{url}/api/sessions", headers={"Authorization": "Bearer s3cret-token"}
        ).json()
        assert [s["id"] for s in mine] == [session]
        assert theirs == []

        # No MCP session is kept that another token could take over: each request is
        # served as the user of the token it carries...
        opened = httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, **bearer})
        assert opened.status_code == 200 and "mcp-session-id" not in opened.headers
        # ... so what alice's requests leave behind, her conversation, answers only her:
        # another token that names it is told there is none, and alice goes on with it.
        follow_up = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": QUESTION, "session_id": session}},
        }
        version = {"mcp-protocol-version": "2025-06-18"}
        other = {"Authorization": "Bearer s3cret-token"}
        stolen = call(url, follow_up, {**version, **other})
        assert stolen["isError"] and f"no session {session}" in stolen["content"][0]["text"]
        own = call(url, follow_up, {**version, **bearer})
        assert not own["isError"] and own["structuredContent"]["session_id"] == session


def call(url: str, message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """The result of one JSON-RPC request to `/mcp`, read from its event stream."""
    answer = httpx.post(f"{url}/mcp", json=message, headers={**HEADERS, **headers}, timeout=30)
    assert answer.status_code == 200, answer.text
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    result: dict[str, Any] = json.loads(data[-1])["result"]
    return result


async def test_asking_over_http_spends_the_apis_per_minute_budget(tmp_path: Path) -> None:
    with serve(tmp_path, api_rate_per_minute=2) as base:
        async with Client(f"{base}/mcp", mode="legacy") as client:
            first = await client.call_tool("ask", {"question": QUESTION})
            # The same client's second request of the minute goes through the API...
            api = httpx.post(f"{base}/api/chat", json={"message": QUESTION}, timeout=30)
            # ... so the third, an MCP `ask`, is over the budget of 2.
            third = await client.call_tool("ask", {"question": QUESTION})
            searched = await client.call_tool("search_docs", {"query": "open a file"})
    assert not first.is_error and api.status_code == 200
    assert third.is_error
    assert "too many requests: the limit is 2 per minute; try again in" in text_of(third)
    assert not searched.is_error  # searches cost no model time and are not counted


async def test_http_lists_the_tools_of_the_apps_enabled_sources(tmp_path: Path) -> None:
    with serve(tmp_path, enabled_sources="installed_docs,local_code") as base:
        async with Client(f"{base}/mcp") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            docs = await client.call_tool("search_docs", {"query": "open a file"})
    assert set(tools) == {"ask", "search_docs", "search_code"}
    annotations = tools["ask"].annotations
    assert annotations is not None and annotations.open_world_hint is False
    # Structured content over HTTP too, beside the text.
    assert docs.structured_content is not None and not docs.is_error
    [first, *_] = docs.structured_content["results"]
    assert text_of(docs).startswith(
        f"[1] {first['title']} ({first['source']})\nurl: {first['url']}"
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_prompt_is_invalid_params(url: str, mode: str) -> None:
    """As an unknown resource is: not the SDK's error code 0 (or, on the 2026 wire, an
    internal error and a logged traceback) for a name the client got wrong."""
    async with Client(f"{url}/mcp", mode=mode) as client:
        listed = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert listed == {"debug_error", "explain_api"}
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("no_such_prompt")
    assert raised.value.code == INVALID_PARAMS
    assert "Unknown prompt: no_such_prompt" in str(raised.value)
