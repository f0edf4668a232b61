"""The MCP endpoint of `codeweaver serve`: streamable HTTP at `/mcp`, beside the API.

The route sits inside the app's middleware, so the Host check (DNS rebinding), the
Origin check, the body limit and the security headers apply to it as to the API; the
SDK's own Host/Origin protection is therefore switched off rather than configured twice.
Tokens are checked here, with the API's `TokenTable`: 401 without the right one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI, HTTPException
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
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

MCP_PATH = "/mcp"
# The app's Host and Origin middleware guard /mcp; see the module docstring.
_NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _budget(request: Request, user: str | None) -> Callable[[], Awaitable[None]]:
    """The API's per-minute budget for this caller (per user with tokens, else per
    client address), checked by `ask` when it starts an answer."""
    state = request.app.state
    key = rate_key(user, client_address(request, state.proxies))

    async def check() -> None:
        await state.limiter.check(key)

    return check


class _Endpoint:
    """The ASGI app behind the route: authenticate, then hand over to the SDK.

    A callable object, not a function, so Starlette passes it the raw ASGI call (every
    method: POST messages, GET for the event stream, DELETE to end a session).
    """

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tokens: TokenTable = scope["app"].state.tokens
        try:
            user = tokens.authenticate(Request(scope))
        except HTTPException as exc:
            refusal = JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)
            await refusal(scope, receive, send)
            return
        if self.manager is None:
            await JSONResponse({"detail": "the MCP endpoint is not running"}, 503)(
                scope, receive, send
            )
            return
        scope[USER_SCOPE_KEY] = user
        scope[BUDGET_SCOPE_KEY] = _budget(Request(scope), user if tokens.required else None)
        if tokens.required:
            # The SDK binds each MCP session to the credential that opened it: another
            # user who learns a session id gets 404, not that session.
            scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=user, scopes=[]))
        await self.manager.handle_request(scope, receive, send)


class McpExtension:
    """`codeweaver.api.app.AppExtension` serving the MCP tools at `/mcp`."""

    def __init__(self, path: str = MCP_PATH) -> None:
        self.path = path
        self.endpoint = _Endpoint()
        self.server: MCPServer | None = None

    def install(self, app: FastAPI) -> None:
        async def service() -> ChatService:
            found: ChatService = await app.state.starting.service()
            return found

        self.server = build_server(service)
        app.router.routes.append(Route(self.path, self.endpoint, name="mcp"))

    @asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        if self.server is None:
            raise RuntimeError("McpExtension.install was not called")
        # A session manager runs once: a new one for each time the app starts.
        self.server.streamable_http_app(
            streamable_http_path=self.path, transport_security=_NO_SDK_HOST_CHECK
        )
        manager = self.server.session_manager
        async with manager.run():
            self.endpoint.manager = manager
            try:
                yield
            finally:
                self.endpoint.manager = None
