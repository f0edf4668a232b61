"""`/mcp` behind a round-robin balancer: two replicas, each request to either of them.

`deploy/compose.yaml` puts nginx's round robin in front of two replicas, so a client's
next request rarely reaches the replica that answered its last one. The client here is
the SDK's own, in the handshake (legacy) mode that carries an `Mcp-Session-Id`; its HTTP
client routes each request to a replica as a balancer would, and records which one
served which JSON-RPC method.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from codeweaver.api.app import create_app
from codeweaver.mcp_server.http import McpExtension
from tests.e2e.mcp_server.test_http import HEADERS, INITIALIZE
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.unit.mcp_server.helpers import ANSWER, QUESTION, SCRIPT

# Which replica (0 or 1) gets a request: from the request's JSON-RPC method and how
# many requests went before it.
Route = Callable[[str, int], int]


class Balancer(httpx2.AsyncBaseTransport):
    """Sends each request to the replica `route` picks, as a load balancer in front of
    them would, and notes `(method, replica)` for every request."""

    def __init__(self, replicas: list[str], route: Route) -> None:
        self.replicas = [httpx2.URL(url) for url in replicas]
        self.route = route
        self.served: list[tuple[str, int]] = []
        self._next = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        method = _method(request)
        replica = self.route(method, len(self.served))
        self.served.append((method, replica))
        target = self.replicas[replica]
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        return await self._next.handle_async_request(request)

    async def aclose(self) -> None:
        await self._next.aclose()

    def replicas_of(self, method: str) -> set[int]:
        return {replica for name, replica in self.served if name == method}


def _method(request: httpx2.Request) -> str:
    """The JSON-RPC method of a POST; the HTTP method of anything else (GET, DELETE)."""
    if request.method != "POST":
        return request.method
    body = json.loads(request.content)
    return str(body.get("method", "response")) if isinstance(body, dict) else "batch"


@contextmanager
def replicas(tmp_path: Path, count: int = 2) -> Iterator[list[str]]:
    """`count` apps, each with its own `/mcp`, on their own loopback ports."""
    with ExitStack() as stack:
        urls: list[str] = []
        for n in range(count):
            home = tmp_path / f"replica{n}"
            home.mkdir()
            deps, _ = make_deps(home, SCRIPT, sources=[FakeSource(results=[doc(1), doc(2)])])
            deps.settings = deps.settings.model_copy(update={"api_rate_per_minute": 1000})
            app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
            urls.append(stack.enter_context(running_app(app)))
        yield urls


def text_of(result: object) -> str:
    content = getattr(result, "content", [])
    assert content and isinstance(content[0], TextContent)
    return content[0].text


async def test_a_legacy_client_initialized_on_one_replica_is_served_by_the_other(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    with replicas(tmp_path) as urls:
        # The handshake reaches replica 0; every later request reaches replica 1.
        balancer = Balancer(urls, lambda method, _: 0 if method == "initialize" else 1)
        async with (
            httpx2.AsyncClient(transport=balancer, timeout=30) as http,
            Client(
                streamable_http_client(f"{urls[0]}/mcp", http_client=http), mode="legacy"
            ) as client,
        ):
            names = {tool.name for tool in (await client.list_tools()).tools}
            answer = await client.call_tool(
                "ask", {"question": QUESTION}, progress_callback=on_progress
            )
            found = await client.call_tool("search_docs", {"query": "open a file"})
    assert {"ask", "search_docs"} <= names
    assert not answer.is_error and text_of(answer).startswith(ANSWER)
    assert not found.is_error and text_of(found).startswith("[1] doc 1 (installed_docs)")
    # The progress of the answer still streams, within the one request replica 1 served.
    assert "Searching installed docs…" in seen
    assert balancer.replicas_of("initialize") == {0}
    assert balancer.replicas_of("tools/list") == {1}
    assert balancer.replicas_of("tools/call") == {1}


async def test_strict_round_robin_serves_every_call(tmp_path: Path) -> None:
    with replicas(tmp_path) as urls:
        balancer = Balancer(urls, lambda _, before: before % 2)
        async with (
            httpx2.AsyncClient(transport=balancer, timeout=30) as http,
            Client(
                streamable_http_client(f"{urls[0]}/mcp", http_client=http), mode="legacy"
            ) as client,
        ):
            listed = [len((await client.list_tools()).tools) for _ in range(2)]
            found = [
                await client.call_tool("search_docs", {"query": f"open a file {n}"})
                for n in range(4)
            ]
    assert listed[0] == listed[1] > 0
    assert all(not result.is_error for result in found)
    assert balancer.replicas_of("tools/list") == {0, 1}
    assert balancer.replicas_of("tools/call") == {0, 1}


def test_a_session_id_from_another_replica_is_not_refused(tmp_path: Path) -> None:
    """What a balancer does to a client that kept a session id: the id (here one
    replica 0's handshake might have given, or a made-up one) reaches replica 1."""
    with replicas(tmp_path) as urls:
        opened = httpx.post(f"{urls[0]}/mcp", json=INITIALIZE, headers=HEADERS, timeout=10)
        assert opened.status_code == 200
        assert "mcp-session-id" not in opened.headers  # nothing to carry to a replica
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        within = {
            "mcp-session-id": "0123456789abcdef0123456789abcdef",
            "mcp-protocol-version": "2025-06-18",
        }
        listed = httpx.post(
            f"{urls[1]}/mcp", json=listing, headers={**HEADERS, **within}, timeout=10
        )
        assert listed.status_code == 200
        assert '"search_docs"' in listed.text
