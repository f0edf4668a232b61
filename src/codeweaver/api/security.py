"""ASGI guards in front of every route: Host and Origin checks, security headers, a body limit.

A loopback server without a token is reachable from any web page through DNS rebinding
(a page at `http://attacker.example:PORT` whose name resolves to 127.0.0.1), so requests
must name a host the server answers for. State-changing requests from a foreign origin
are refused, and every response says how browsers may use it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimitMiddleware:
    """413 with a clear message for a body over `limit` bytes, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._reject(send, int(declared))
            return
        # Read the body up front (it is small by definition), so an undeclared one that
        # grows past the limit is refused before any route sees it.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._reject(send, len(body))
                return
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": bytes(body), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _reject(self, send: Send, size: int) -> None:
        await send_json(
            send,
            413,
            f"the request body is {size:,} bytes or more; the limit is "
            f"{self.limit:,} bytes (put long material in the knowledge base instead)",
        )


async def send_json(send: Send, code: int, detail: str) -> None:
    """A complete JSON error response `{"detail": …}`."""
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": code,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that first returns `messages`, then the real stream (disconnects)."""
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "", "0")


def _hostname(host_header: str) -> str:
    """`Example.COM.:8000` -> `example.com`; `[::1]:8000` -> `::1`."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else ""
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def allowed_hosts(bind_host: str, configured: Iterable[str]) -> list[str] | None:
    """The host names a server bound to `bind_host` answers for; None answers for any.

    A wildcard bind (`0.0.0.0`) is reached under names the server cannot know, so it
    answers for any unless names are configured; it always needs a token.
    """
    extra = [_hostname(h) if not h.startswith("*.") else h.lower() for h in configured]
    if bind_host.strip("[]") in WILDCARD_BINDS and not extra:
        return None
    names = [*LOOPBACK_NAMES, *extra]
    if bind_host.strip("[]") not in WILDCARD_BINDS:
        names.append(bind_host.strip("[]").lower())
    return names


def _host_matches(host: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern.startswith("*.") and host.endswith(pattern[1:]) and host != pattern[2:]:
            return True
        if host == pattern:
            return True
    return False


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class HostCheckMiddleware:
    """421 for a request whose `Host` is not one this server answers for."""

    def __init__(self, app: ASGIApp, hosts: list[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.hosts is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = _hostname(_header(scope, b"host") or "")
        if _host_matches(host, self.hosts):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send_json(
            send,
            421,
            "this server does not answer for that host name; add it to "
            "CODEWEAVER_ALLOWED_HOSTS if it is yours",
        )


UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _origin_of(url: str) -> tuple[str, str] | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return parts.scheme.lower(), parts.netloc.lower()


class OriginCheckMiddleware:
    """403 for a state-changing request sent by a page of another origin.

    Requests without `Origin` (command-line clients, scripts) are not from a page and
    pass; the page's own requests carry its origin, which is the server's.
    """

    def __init__(self, app: ASGIApp, cors_origins: Iterable[str]) -> None:
        self.app = app
        self.allowed = {o for o in map(_origin_of, cors_origins) if o is not None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in UNSAFE_METHODS:
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        if origin is None or self._same_site(scope, origin):
            await self.app(scope, receive, send)
            return
        await send_json(send, 403, "requests from other web pages are refused")

    def _same_site(self, scope: Scope, origin: str) -> bool:
        parsed = _origin_of(origin)  # "null" (sandboxed pages, files) parses to None
        if parsed is None:
            return False
        if parsed in self.allowed:
            return True
        host = (_header(scope, b"host") or "").strip().lower()
        return parsed[1] == host


# The web page sets its own, stricter policy; /docs loads Swagger UI from its CDN;
# the Gradio app runs inline scripts. Everything else is data and may run nothing.
_DATA_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
_DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "img-src 'self' data: https://fastapi.tiangolo.com; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'"
)
_FRAME_POLICY = "frame-ancestors 'none'"


def content_policy(path: str) -> str:
    if path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        return _DOCS_POLICY
    if path == "/gradio" or path.startswith("/gradio/"):
        return _FRAME_POLICY
    return _DATA_POLICY


class SecurityHeadersMiddleware:
    """nosniff, no referrer, no framing and a content policy on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = content_policy(str(scope.get("path", "")))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {bytes(k).lower() for k, _ in headers}
                for name, value in (
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"content-security-policy", policy.encode()),
                ):
                    if name not in present:
                        headers.append((name, value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
