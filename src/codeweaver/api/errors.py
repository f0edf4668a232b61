"""Error responses that never fail and never leak: JSON, valid, and free of internals.

Python's `json` accepts `NaN`, `Infinity` and `1e400`, and a JSON string may hold a lone
surrogate; FastAPI's own 422 handler echoes such input and then cannot encode it (a 500).
Unexpected exceptions are logged with their traceback and answered without their text,
which can hold SQL or file paths. Under `/v1/` (the OpenAI-compatible API) every error has
OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, which its clients read;
everywhere else it is FastAPI's `{"detail": …}`.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

INTERNAL_ERROR = "internal error; the server's log has the details"
STORE_ERROR = "the conversation store cannot be used right now; the server's log has the details"
_SURROGATES = re.compile("[\ud800-\udfff]")


def json_safe(value: Any) -> Any:
    """`value` with non-finite numbers as text and lone surrogates as U+FFFD."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


OPENAI_PREFIX = "/v1/"
_OPENAI_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
}


class OpenAIError(StarletteHTTPException):
    """An error of the OpenAI-compatible API naming the field at fault and OpenAI's code."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(status, message)
        self.param = param
        self.code = code


def is_openai_path(request: Request) -> bool:
    return request.url.path.startswith(OPENAI_PREFIX)


def openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error body: `type` from the status as OpenAI names it."""
    default = "server_error" if status >= 500 else "invalid_request_error"
    kind = _OPENAI_TYPES.get(status, default)
    return {"error": {"message": json_safe(message), "type": kind, "param": param, "code": code}}


def _first_problem(errors: list[Any]) -> tuple[str, str | None]:
    """A readable message and the offending field (`messages.0.content`) of a 422."""
    if not errors:
        return "the request is not valid", None
    first = errors[0]
    where = [str(part) for part in first.get("loc", ()) if part != "body"]
    param = ".".join(where) or None
    message = str(first.get("msg", "invalid value"))
    return (f"{param}: {message}" if param else message), param


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    if is_openai_path(request):
        message, param = _first_problem(list(errors))
        return JSONResponse(status_code=400, content=openai_error(400, message, param=param))
    return JSONResponse(status_code=422, content={"detail": json_safe(jsonable_encoder(errors))})


async def _http_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, StarletteHTTPException) or not is_openai_path(request):
        return await http_exception_handler(request, exc)  # type: ignore[arg-type]
    param, code = (exc.param, exc.code) if isinstance(exc, OpenAIError) else (None, None)
    if exc.status_code == 401:
        code = "invalid_api_key"
    body = openai_error(exc.status_code, str(exc.detail), param=param, code=code)
    return JSONResponse(status_code=exc.status_code, content=body, headers=exc.headers)


def _failure(request: Request, status: int, message: str) -> JSONResponse:
    if is_openai_path(request):
        return JSONResponse(status_code=status, content=openai_error(status, message))
    return JSONResponse(status_code=status, content={"detail": message})


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return _failure(request, 500, INTERNAL_ERROR)


async def _store_failed(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s: the store failed", request.method, request.url.path, exc_info=exc)
    return _failure(request, 503, STORE_ERROR)


def _database_errors() -> tuple[type[Exception], ...]:
    import sqlite3

    errors: list[type[Exception]] = [sqlite3.Error]
    try:
        import psycopg
    except ImportError:  # the PostgreSQL extra is optional
        pass
    else:
        errors.append(psycopg.Error)
    return tuple(errors)


class OpenAIGuardErrors:
    """Outermost ASGI layer: under `/v1/`, the `{"detail": …}` errors the guards in
    front of the routes send (Host, Origin, body size) get OpenAI's shape too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(OPENAI_PREFIX):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = bytearray()

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message  # held until the body shows whether it needs rewriting
                return
            if start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            status, content = start["status"], bytes(body)
            try:
                data = json.loads(content)
            except ValueError:
                data = None
            headers = list(start.get("headers", []))
            if isinstance(data, dict) and set(data) == {"detail"}:
                content = json.dumps(openai_error(status, str(data["detail"]))).encode()
                headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(content)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": content})

        await self.app(scope, receive, rewrite)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    for error in _database_errors():
        app.add_exception_handler(error, _store_failed)
    app.add_exception_handler(Exception, _unexpected)
