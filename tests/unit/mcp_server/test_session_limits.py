"""MCP sessions on a real loopback server are rationed per user: one user who opens many
cannot lock the others out of `/mcp`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.api.background import serve_in_thread
from codeweaver.mcp_server.http import McpExtension
from tests.fakes import FakeSource, doc, make_deps
from tests.unit.mcp_server.helpers import QUESTION, SCRIPT
from tests.unit.mcp_server.test_http import HEADERS, INITIALIZE

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
            "api_tokens_file": tokens,
            "api_rate_per_minute": 1000,
            **settings,
        }
    )
    app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
    with serve_in_thread(app) as url:
        yield url


def initialize(url: str, who: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**HEADERS, **who}, timeout=10)


def session_of(opened: httpx.Response) -> dict[str, str]:
    """The headers of a request within the session `opened` started."""
    return {
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": INITIALIZE["params"]["protocolVersion"],  # type: ignore[index]
    }


async def search_as(url: str, who: dict[str, str]) -> str:
    """A whole MCP client run: initialize, call a tool, end the session."""
    async with (
        httpx2.AsyncClient(headers=who, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool("search_docs", {"query": "open a file"})
    assert not result.is_error
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def test_a_user_at_the_limit_is_refused_while_others_still_get_sessions(
    tmp_path: Path,
) -> None:
    with serve(tmp_path, mcp_sessions_per_user=2) as url:
        bobs = [initialize(url, BOB) for _ in range(2)]
        assert [r.status_code for r in bobs] == [200, 200]
        refused = initialize(url, BOB)
        assert refused.status_code == 429
        error = refused.json()["error"]
        assert error["message"].startswith("too many open MCP sessions: 2 are open")

        # Alice is not Bob: her client opens a session and calls a tool.
        assert (await search_as(url, ALICE)).startswith("[1] doc 1")
        assert initialize(url, ALICE).status_code == 200

        # Ending one of Bob's sessions gives him its place back.
        ended = httpx.delete(
            f"{url}/mcp",
            headers={**HEADERS, **BOB, **session_of(bobs[0])},
        )
        assert ended.status_code == 200
        assert initialize(url, BOB).status_code == 200
        assert initialize(url, BOB).status_code == 429


async def test_opening_a_session_spends_a_per_minute_budget(tmp_path: Path) -> None:
    with serve(tmp_path, api_rate_per_minute=3, mcp_sessions_per_user=100) as url:
        assert [initialize(url, BOB).status_code for _ in range(3)] == [200, 200, 200]
        over = initialize(url, BOB)
        assert over.status_code == 429
        assert "the limit is 3 per minute" in over.json()["error"]["message"]
        assert int(over.headers["retry-after"]) >= 1
        # Bob's budget is his own...
        assert (await search_as(url, ALICE)).startswith("[1] doc 1")
        # ... and a handshake costs him no answer: the API still serves his chats.
        chat = httpx.post(f"{url}/api/chat", json={"message": QUESTION}, headers=BOB, timeout=30)
        assert chat.status_code == 200, chat.text


def test_an_idle_session_is_closed_and_frees_its_place(tmp_path: Path) -> None:
    with serve(tmp_path, mcp_sessions_per_user=1, mcp_session_idle_seconds=0.5) as url:
        first = initialize(url, BOB)
        assert first.status_code == 200
        assert initialize(url, BOB).status_code == 429
        deadline = time.monotonic() + 10
        again = initialize(url, BOB)
        while again.status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.1)
            again = initialize(url, BOB)
        assert again.status_code == 200
        # The idle session is gone, not just uncounted.
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        stale = httpx.post(
            f"{url}/mcp", json=listing, headers={**HEADERS, **BOB, **session_of(first)}
        )
        assert stale.status_code == 404
