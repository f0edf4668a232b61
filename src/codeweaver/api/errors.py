"""Error responses that never fail and never leak: JSON, valid, and free of internals.

Python's `json` accepts `NaN`, `Infinity` and `1e400`, and a JSON string may hold a lone
surrogate; FastAPI's own 422 handler echoes such input and then cannot encode it (a 500).
Unexpected exceptions are logged with their traceback and answered without their text,
which can hold SQL or file paths.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

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


async def _invalid_request(_request: Request, exc: Exception) -> JSONResponse:
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse(status_code=422, content={"detail": json_safe(jsonable_encoder(errors))})


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse(status_code=500, content={"detail": INTERNAL_ERROR})


async def _store_failed(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s: the store failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse(status_code=503, content={"detail": STORE_ERROR})


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


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid_request)
    for error in _database_errors():
        app.add_exception_handler(error, _store_failed)
    app.add_exception_handler(Exception, _unexpected)
