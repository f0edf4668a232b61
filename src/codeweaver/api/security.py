"""What makes the service safe to expose: a bearer token, a body limit and a rate limit."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import HTTPException, Request, status

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ExposedWithoutTokenError(ValueError):
    """Binding off loopback needs CODEWEAVER_API_TOKEN."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise ExposedWithoutTokenError(
            f"refusing to listen on {host} without CODEWEAVER_API_TOKEN: anyone who can reach "
            "it could use your model and read your sessions. Set a token (clients send "
            "`Authorization: Bearer <token>`) or bind to 127.0.0.1."
        )


def bearer_guard(token: str | None) -> Callable[[Request], None]:
    """A dependency that requires `Authorization: Bearer <token>` when a token is set."""
    expected = token.encode() if token else None

    def guard(request: Request) -> None:
        if expected is None:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(given.encode(), expected):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "missing or wrong bearer token",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return guard


def client_key(request: Request) -> str:
    """Who a request counts against: its token (hashed) or else its address."""
    auth = request.headers.get("authorization", "")
    if auth:
        return "token:" + hashlib.sha256(auth.encode()).hexdigest()[:16]
    return "addr:" + (request.client.host if request.client else "unknown")


class RateLimiter:
    """At most `per_minute` requests per client in any sliding minute."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}

    def check(self, key: str) -> None:
        now = self.clock()
        seen = self._seen.setdefault(key, deque())
        while seen and now - seen[0] >= 60:
            seen.popleft()
        if len(seen) >= self.per_minute:
            retry = max(1, math.ceil(60 - (now - seen[0])))
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"too many requests: the limit is {self.per_minute} per minute; "
                f"try again in {retry} s",
                headers={"Retry-After": str(retry)},
            )
        seen.append(now)
        if len(self._seen) > 10_000:  # forget idle clients so memory stays bounded
            for idle in [k for k, v in self._seen.items() if not v or now - v[-1] >= 60]:
                del self._seen[idle]


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
        body = json.dumps(
            {
                "detail": f"the request body is {size:,} bytes or more; the limit is "
                f"{self.limit:,} bytes (put long material in the knowledge base instead)"
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
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
