"""The MCP requests a user has in flight on a real loopback server are rationed per user:
one user who holds many open cannot lock the others out of `/mcp`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.mcp_server.http import McpExtension
from tests.e2e.mcp_server.test_http import HEADERS, INITIALIZE
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.unit.mcp_server.helpers import QUESTION, SCRIPT

ALICE = {"Authorization": "Bearer alice-token-0123456789"}
BOB = {"Authorization": "Bearer bob-token-0123456789ab"}


@contextmanager
def serve(tmp_path: Path, **settings: Any) -> Iterator[str]:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token-0123456789\nbob bob-token-0123456789ab\n")
    deps, _ = make_deps(tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1)])])
    deps.settings = deps.settings.model_copy(
        update={
            "api_token": SecretStr("admin-token-0123456789"),
            "api_tokens": tokens,
            "api_rate_per_minute": 1000,
            **settings,
        }
    )
    app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
    with running_app(app) as url:
        yield url


def initialize(url: str, who: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, **who}, timeout=10)


async def served_again(url: str, who: dict[str, str]) -> httpx.Response:
    """`who`'s next request, retried while refused: a place comes free once the server
    has seen the hang-up, a moment after the client's. (It waits without blocking the
    event loop, on which the SDK's client is still closing its stream.)"""
    deadline = time.monotonic() + 10
    async with httpx.AsyncClient(timeout=10) as http:
        while True:
            answer = await http.post(f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, **who})
            if answer.status_code != 429 or time.monotonic() > deadline:
                return answer
            await asyncio.sleep(0.05)


@asynccontextmanager
async def client_of(url: str, who: dict[str, str]) -> AsyncIterator[Client]:
    """The SDK's client with `who`'s token (its default mode: each request on its own)."""
    async with (
        httpx2.AsyncClient(headers=who, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


async def search_as(url: str, who: dict[str, str]) -> str:
    """A whole MCP client run: handshake, a tool call."""
    async with (
        httpx2.AsyncClient(headers=who, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool("search_docs", {"query": "open a file"})
    assert not result.is_error
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def test_a_user_at_the_limit_is_refused_while_others_still_get_served(
    tmp_path: Path,
) -> None:
    with serve(tmp_path, mcp_sessions=2) as url:
        async with client_of(url, BOB) as bob:
            # An open `subscriptions/listen` stream is a request in flight until closed.
            async with bob.listen(tools_list_changed=True), bob.listen(tools_list_changed=True):
                refused = initialize(url, BOB)
                assert refused.status_code == 429
                error = refused.json()["error"]
                assert error["message"].startswith("too many MCP requests in flight: 2 are open")

                # Alice is not Bob: her client does its handshake and calls a tool.
                assert (await search_as(url, ALICE)).startswith("[1] doc 1")
                assert initialize(url, ALICE).status_code == 200

            # Closing his streams gives Bob their places back...
            assert (await served_again(url, BOB)).status_code == 200
            async with bob.listen(tools_list_changed=True), bob.listen(tools_list_changed=True):
                # ... as many as before, and no more.
                assert initialize(url, BOB).status_code == 429


async def test_a_request_frees_its_place_when_its_client_hangs_up(tmp_path: Path) -> None:
    with serve(tmp_path, mcp_sessions=1) as url:
        async with client_of(url, BOB) as bob, bob.listen(tools_list_changed=True):
            assert initialize(url, BOB).status_code == 429
        # The client went away without a word (no DELETE, nothing to end): its place is
        # free again, not held until some time-out.
        assert (await served_again(url, BOB)).status_code == 200


def test_handshakes_hold_nothing_and_cost_no_budget(tmp_path: Path) -> None:
    """A handshake opens nothing (nothing is kept between requests): once answered it
    holds no place, and it spends none of the per-minute budget of answers."""
    with serve(tmp_path, api_rate_per_minute=3, mcp_sessions=1) as url:
        handshakes = [initialize(url, BOB) for _ in range(6)]
        assert [r.status_code for r in handshakes] == [200] * 6
        assert all("mcp-session-id" not in r.headers for r in handshakes)
        # The budget is still whole: Bob's three answers of the minute go through...
        for _ in range(3):
            chat = httpx.post(
                f"{url}/api/chat", json={"message": QUESTION}, headers=BOB, timeout=30
            )
            assert chat.status_code == 200, chat.text
        # ... and it is still enforced, a fourth is over it.
        over = httpx.post(f"{url}/api/chat", json={"message": QUESTION}, headers=BOB, timeout=30)
        assert over.status_code == 429
