"""The MCP endpoint of `codeweaver serve`: streamable HTTP at `/mcp`, beside the API.

The route sits inside the app's middleware, so the Host check (DNS rebinding), the
Origin check, the body limit and the security headers apply to it as to the API; the
SDK's own Host/Origin protection is therefore switched off rather than configured twice.
Tokens are checked here, with the API's `TokenTable`: 401 without the right one.

Stateless: every request is served on its own, and nothing is kept between requests (no
`Mcp-Session-Id`), so behind a round-robin balancer (`deploy/compose.yaml`) any replica
answers any request, whichever one answered the client's `initialize`. Nothing the tools
do needs a session: the server sends clients no requests (sampling, elicitation) and no
notifications outside the response of the request they belong to, which is where an
`ask`'s progress streams. A GET (the stream for server-initiated messages) gets 405:
nothing would ever be sent on it.

What a request holds while it runs (a server task; an `ask`'s run, an open
`subscriptions/listen` stream) is rationed per client, its user with tokens, else its
address: a client with `CODEWEAVER_MCP_SESSIONS` requests in flight gets 429 for another
one while every other client is still served, and a request's place is free again when
it ends or its client hangs up. The count is per replica.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI, HTTPException
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from codeweaver.api.rate_limit import client_address, rate_key
from codeweaver.mcp_server.server import BUDGET_SCOPE_KEY, USER_SCOPE_KEY, build_server

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from codeweaver.api.auth import TokenTable
    from codeweaver.api.service import ChatService
    from codeweaver.config import Settings

MCP_PATH = "/mcp"
# The app's Host and Origin middleware guard /mcp; see the module docstring.
_NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)
# A JSON-RPC "server error": the request is valid, but refused for now. The SDK's client
# shows a JSON-RPC error body's message to its user.
_REFUSED = -32000


def _budget(key: str, request: Request) -> Callable[[], Awaitable[None]]:
    """The API's per-minute budget of the client `key`, checked by `ask` when it starts
    an answer."""
    limiter = request.app.state.limiter

    async def check() -> None:
        await limiter.check(key)

    return check


def _refusal(status: int, message: str) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": _REFUSED, "message": message}}
    return JSONResponse(body, status)


class InFlight:
    """The MCP requests each client has in flight, so that a client at its limit is
    refused another one while every other client is still served."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: Counter[str] = Counter()

    def enter(self, key: str) -> bool:
        """Take a place for a request of `key`; False at its limit."""
        if self._open[key] >= self.limit:
            return False
        self._open[key] += 1
        return True

    def leave(self, key: str) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]  # clients come and go: keep only those with requests

    def refusal(self) -> JSONResponse:
        return _refusal(
            429,
            f"too many MCP requests in flight: {self.limit} are open for this client. "
            "Wait for one to finish, or close a stream you no longer read.",
        )


# The stream for server-initiated messages belongs to a session; without sessions
# nothing would ever be sent on it, so it is not offered (the transport allows 405).
_NO_EVENT_STREAM = JSONResponse(
    {"detail": "this endpoint is stateless: POST each request; it offers no GET stream"},
    405,
    {"Allow": "POST"},
)


class _Endpoint:
    """The ASGI app behind the route: authenticate, then hand over to the SDK.

    A callable object, not a function, so Starlette passes it the raw ASGI call, whatever
    its HTTP method (a function would become a GET-only request handler).
    """

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None
        self.requests: InFlight | None = None  # both set while the app serves

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope["app"].state
        tokens: TokenTable = state.tokens
        request = Request(scope)
        try:
            user = tokens.authenticate(request)
        except HTTPException as exc:
            refusal = JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)
            await refusal(scope, receive, send)
            return
        manager, requests = self.manager, self.requests
        if manager is None or requests is None:
            await JSONResponse({"detail": "the MCP endpoint is not running"}, 503)(
                scope, receive, send
            )
            return
        if request.method == "GET":
            await _NO_EVENT_STREAM(scope, receive, send)
            return
        # Per user with tokens, else per client address, as the API counts.
        key = rate_key(user if tokens.required else None, client_address(request, state.proxies))
        if not requests.enter(key):
            await requests.refusal()(scope, receive, send)
            return
        scope[USER_SCOPE_KEY] = user
        scope[BUDGET_SCOPE_KEY] = _budget(key, request)
        try:
            await manager.handle_request(scope, receive, send)
        finally:
            requests.leave(key)


class McpExtension:
    """`codeweaver.api.app.AppExtension` serving the MCP tools at `/mcp`."""

    def __init__(self, path: str = MCP_PATH) -> None:
        self.path = path
        self.endpoint = _Endpoint()
        self.server: MCPServer | None = None  # built each time the app starts
        self._installed: FastAPI | None = None

    def install(self, app: FastAPI) -> None:
        self._installed = app
        app.router.routes.append(Route(self.path, self.endpoint, name="mcp"))

    @asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        if self._installed is not app:
            raise RuntimeError("McpExtension.install was not called")

        async def service() -> ChatService:
            found: ChatService = await app.state.starting.service()
            return found

        settings: Settings = app.state.starting.settings
        # Built here, not at install: the settings (which tools to list) arrive with the
        # app's start.
        self.server = build_server(service, settings=settings)
        self.endpoint.requests = InFlight(settings.mcp_sessions)
        # A session manager runs once: a new one for each time the app starts.
        self.server.streamable_http_app(
            streamable_http_path=self.path,
            transport_security=_NO_SDK_HOST_CHECK,
            stateless_http=True,
        )
        manager = self.server.session_manager
        async with manager.run():
            self.endpoint.manager = manager
            try:
                yield
            finally:
                self.endpoint.manager = None
                self.endpoint.requests = None
