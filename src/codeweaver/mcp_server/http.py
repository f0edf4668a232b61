"""The MCP endpoint of `codeweaver serve`: streamable HTTP at `/mcp`, beside the API.

The route sits inside the app's middleware, so the Host check (DNS rebinding), the
Origin check, the body limit and the security headers apply to it as to the API; the
SDK's own Host/Origin protection is therefore switched off rather than configured twice.
Tokens are checked here, with the API's `TokenTable`: 401 without the right one.

Sessions are rationed per client (its user with tokens, else its address): the SDK's own
limit is one for everybody, so one client holding it would lock every other one out. A
request that opens a session costs one of the client's per-minute budget of openings (as
large as its API budget, but apart from it), a client at `CODEWEAVER_MCP_SESSIONS` open
sessions gets 429 for another one, and a session without requests for
`CODEWEAVER_MCP_IDLE` seconds is closed, which frees its place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from codeweaver.api.rate_limit import client_address, rate_key
from codeweaver.mcp_server.server import BUDGET_SCOPE_KEY, USER_SCOPE_KEY, build_server

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.datastructures import Headers
    from starlette.types import Message, Receive, Scope, Send

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


def _opening_key(key: str) -> str:
    """The budget of session openings: as large as the API budget, but apart from it, so
    a client's handshake never costs it an answer."""
    return f"mcp-open:{key}"


def _opens_session(headers: Headers) -> bool:
    """Whether the SDK would open a session for this request: one without a session id
    on the handshake's protocol versions (later versions have no sessions)."""
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
    return MCP_SESSION_ID_HEADER not in headers and (
        version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
    )


def _refusal(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": _REFUSED, "message": message}}
    return JSONResponse(body, status, dict(headers or {}))


def _open_sessions(manager: StreamableHTTPSessionManager) -> Collection[str]:
    """The ids of the sessions the SDK holds open now. The SDK forgets a session when it
    ends (DELETE, idle time-out, crash) but tells nobody, so this reads its table."""
    table: dict[str, Any] = manager._server_instances
    return table.keys()


class SessionLedger:
    """The MCP sessions each client holds, so that a client at its limit is refused a
    new one while every other client still gets theirs."""

    def __init__(self, limit: int, idle_seconds: float) -> None:
        self.limit = limit
        self.idle_seconds = idle_seconds
        self._held: dict[str, set[str]] = {}
        self._opening: Counter[str] = Counter()
        self._recorded = 0  # ids in `_held`, ended or not

    def reserve(self, key: str, open_ids: Collection[str]) -> bool:
        """Take a place for a session `key` is opening; False at its limit."""
        held = self._live(key, open_ids)
        if held + self._opening[key] >= self.limit:
            return False
        self._opening[key] += 1
        return True

    def settle(self, key: str, session_id: str | None, open_ids: Collection[str]) -> None:
        """The opening request is over: the place goes to its session if it was opened."""
        self._opening[key] -= 1
        if self._opening[key] <= 0:
            del self._opening[key]
        if session_id is not None and session_id in open_ids:
            self._held.setdefault(key, set()).add(session_id)
            self._recorded += 1
        # Clients that never come back leave ended ids behind: sweep them all now and
        # then (when they could outnumber the open sessions), not on every request.
        if self._recorded > 2 * len(open_ids) + 64:
            for client in list(self._held):
                self._live(client, open_ids)

    def refusal(self) -> JSONResponse:
        return _refusal(
            429,
            f"too many open MCP sessions: {self.limit} are open for this client. End one "
            "(DELETE /mcp with its Mcp-Session-Id), or wait until one has been idle for "
            f"{self.idle_seconds:.0f} s.",
        )

    def _live(self, key: str, open_ids: Collection[str]) -> int:
        """How many sessions `key` holds open, its ended ones forgotten."""
        ids = self._held.get(key)
        if not ids:
            return 0
        live = {i for i in ids if i in open_ids}
        self._recorded -= len(ids) - len(live)
        if live:
            self._held[key] = live
        else:
            del self._held[key]
        return len(live)


class _Endpoint:
    """The ASGI app behind the route: authenticate, then hand over to the SDK.

    A callable object, not a function, so Starlette passes it the raw ASGI call (every
    method: POST messages, GET for the event stream, DELETE to end a session).
    """

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None
        self.sessions: SessionLedger | None = None  # both set while the app serves

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
        manager, sessions = self.manager, self.sessions
        if manager is None or sessions is None:
            await JSONResponse({"detail": "the MCP endpoint is not running"}, 503)(
                scope, receive, send
            )
            return
        # Per user with tokens, else per client address, as the API counts.
        key = rate_key(user if tokens.required else None, client_address(request, state.proxies))
        scope[USER_SCOPE_KEY] = user
        scope[BUDGET_SCOPE_KEY] = _budget(key, request)
        if tokens.required:
            # The SDK binds each MCP session to the credential that opened it: another
            # user who learns a session id gets 404, not that session.
            scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=user, scopes=[]))
        if _opens_session(request.headers):
            await _open(manager, sessions, key, scope, receive, send)
        else:
            await manager.handle_request(scope, receive, send)


async def _open(
    manager: StreamableHTTPSessionManager,
    sessions: SessionLedger,
    key: str,
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    """A request that opens a session: served within the client's share and budget."""
    open_ids = _open_sessions(manager)
    if not sessions.reserve(key, open_ids):
        await sessions.refusal()(scope, receive, send)
        return
    opened: str | None = None

    async def watch(message: Message) -> None:
        nonlocal opened
        if message["type"] == "http.response.start" and message["status"] < 400:
            found = dict(message.get("headers", [])).get(MCP_SESSION_ID_HEADER.encode())
            opened = found.decode("latin-1") if found is not None else None
        await send(message)

    try:
        try:
            await scope["app"].state.limiter.check(_opening_key(key))
        except HTTPException as exc:  # 429 over the budget, 503 without its store
            await _refusal(exc.status_code, str(exc.detail), exc.headers)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, watch)
    finally:
        sessions.settle(key, opened, open_ids)


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
        idle = settings.mcp_session_idle_seconds
        self.endpoint.sessions = SessionLedger(settings.mcp_sessions_per_user, idle)
        # A session manager runs once: a new one for each time the app starts.
        self.server.streamable_http_app(
            streamable_http_path=self.path,
            transport_security=_NO_SDK_HOST_CHECK,
            session_idle_timeout=idle,
        )
        manager = self.server.session_manager
        async with manager.run():
            self.endpoint.manager = manager
            try:
                yield
            finally:
                self.endpoint.manager = None
                self.endpoint.sessions = None
