"""One local model on llama.cpp's native server, shared by several CodeWeaver processes as
`openai:<alias>` with `OPENAI_BASE_URL` (`codeweaver model serve`).

The native server (`llama_runtime`) decodes `slots` answers at once with continuous batching
and queues the rest in arrival order. It listens on a private loopback port behind a random
key; clients reach it through the guard here, which:

- checks the key clients must send (`CODEWEAVER_MODEL_SERVER_KEY`), when one is set;
- refuses what the native server cannot serve safely with a 4xx, before it sees it: a body
  over `MAX_BODY_BYTES` (413), and a JSON schema to decode under that is too large or asks
  for more repetitions than `MAX_SCHEMA_REPEAT` (400; one with `"maxItems": 2000` crashed
  the previous runtime, stopping every replica's answers);
- answers `GET /codeweaver/model` with the model, its slots and context, at once;
- forwards everything else as it is, streamed both ways; a client that goes away frees its
  slot.

llama.cpp reads OpenAI's `json_schema` response format natively, so it is forwarded as is.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.config import Settings
from codeweaver.llm.busy import computing
from codeweaver.llm.llama_runtime import Runtime
from codeweaver.llm.registry import ModelConfigError, ModelRef, resolve_local_path
from codeweaver.llm.remote import INFO_PATH
from codeweaver.llm.weights import KNOWN_WEIGHTS, ProgressCallback

if TYPE_CHECKING:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

# A full context of text, escaped, with room for a token ban: far below what hurts.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_SCHEMA_BYTES = 64 * 1024
# Grammar repetitions are expanded rule by rule: bounds above this are refused.
MAX_SCHEMA_REPEAT = 1000
_REPEAT_KEYS = frozenset(
    {"maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties",
     "maxContains", "minContains"}
)  # fmt: skip
# Routes that answer without a key, as the native server's own.
_PUBLIC = frozenset({"/health", "/v1/health"})
# Response headers not passed on: the guard's server sets its own framing, and the body is
# relayed decoded.
_HOP_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}
)


@dataclass(frozen=True)
class ServedModel:
    """What `model serve` runs: the weights, the name clients ask for, the runtime."""

    alias: str
    path: Path
    n_ctx: int
    n_threads: int
    slots: int = 4

    def info(self) -> dict[str, Any]:
        """The JSON of `GET /codeweaver/model`."""
        return {"model": self.alias, "concurrency": self.slots, "context": self.n_ctx}

    def runtime(self) -> Runtime:
        return Runtime(self.path, self.alias, self.n_ctx, self.n_threads, self.slots)


def served_model(
    spec: str, settings: Settings, progress: ProgressCallback | None = None
) -> ServedModel:
    """The local model named by `spec` (`local:<alias>` or `local:/path/x.gguf`), its
    weights assembled (with `progress`) when needed."""
    ref = ModelRef.parse(spec)
    if ref.provider != "local":
        raise ModelConfigError(
            f"`model serve` runs a local model (`local:{next(iter(KNOWN_WEIGHTS))}` or "
            f"`local:/path/to/model.gguf`), not {str(ref)!r}"
        )
    path = resolve_local_path(ref.name, settings, progress)
    alias = ref.name if ref.name in KNOWN_WEIGHTS else path.stem
    threads = settings.llm_threads or max(1, os.cpu_count() or 1)
    return ServedModel(
        alias=alias,
        path=path,
        n_ctx=settings.llm_context,
        n_threads=threads,
        slots=settings.model_server_slots,
    )


class RefusedRequest(ValueError):
    """A request the guard does not forward; `status` is the HTTP status it gets."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _repeat_bound(schema: Any) -> int:
    """The largest repetition bound anywhere in a JSON schema."""
    if isinstance(schema, dict):
        own = [v for k, v in schema.items() if k in _REPEAT_KEYS and isinstance(v, int)]
        return max([*own, *(_repeat_bound(v) for v in schema.values()), 0])
    if isinstance(schema, list):
        return max([*(_repeat_bound(v) for v in schema), 0])
    return 0


def _schema_of(response_format: Any) -> Any:
    if not isinstance(response_format, dict):
        return None
    inner = response_format.get("json_schema")
    if isinstance(inner, dict):
        return inner.get("schema")
    return response_format.get("schema")


def check_request(body: bytes) -> None:
    """Raise `RefusedRequest` for a body the native server should not see (anything else,
    including malformed JSON, is left for it to judge)."""
    if len(body) > MAX_BODY_BYTES:
        raise RefusedRequest(413, f"request body over {MAX_BODY_BYTES:,} bytes")
    try:
        request = json.loads(body)
    except ValueError:
        return
    if not isinstance(request, dict):
        return
    schemas = [_schema_of(request.get("response_format")), request.get("json_schema")]
    for schema in schemas:
        if schema is None:
            continue
        if len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
            raise RefusedRequest(400, f"JSON schema over {MAX_SCHEMA_BYTES:,} bytes")
        bound = _repeat_bound(schema)
        if bound > MAX_SCHEMA_REPEAT:
            raise RefusedRequest(
                400,
                f"JSON schema repetition bound {bound} is over {MAX_SCHEMA_REPEAT} "
                "(maxItems, maxLength and the like)",
            )


def _error(status: int, message: str, kind: str) -> Response:
    from starlette.responses import JSONResponse

    # The native server's own error shape, so clients read both alike.
    return JSONResponse(
        {"error": {"code": status, "message": message, "type": kind}}, status_code=status
    )


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise RefusedRequest(413, f"request body over {MAX_BODY_BYTES:,} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise RefusedRequest(413, f"request body over {MAX_BODY_BYTES:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def create_model_server_app(
    model: ServedModel, upstream: httpx.AsyncClient, api_key: str | None = None
) -> Starlette:
    """The guard in front of the native server that `upstream` reaches (its base URL and
    private key set on the client)."""
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    info = model.info()

    def allowed(request: Request) -> bool:
        if api_key is None or request.url.path in _PUBLIC:
            return True
        sent = request.headers.get("authorization", "")
        token = sent[7:] if sent[:7].lower() == "bearer " else ""
        return hmac.compare_digest(token.encode(), api_key.encode())

    async def model_info(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "Invalid API Key", "authentication_error")
        return JSONResponse(info)

    async def forward(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "Invalid API Key", "authentication_error")
        try:
            body = await _read_body(request)
            if request.method == "POST":
                check_request(body)
        except RefusedRequest as exc:
            return _error(exc.status, str(exc), "invalid_request_error")
        headers = {
            k: v for k, v in request.headers.items() if k.lower() in {"content-type", "accept"}
        }
        outgoing = upstream.build_request(
            request.method,
            request.url.path,
            params=request.query_params,
            content=body,
            headers=headers,
        )
        held = contextlib.ExitStack()
        held.enter_context(computing())  # background work on this machine waits meanwhile
        try:
            reply = await upstream.send(outgoing, stream=True)
        except BaseException:
            held.close()
            raise

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in reply.aiter_bytes():
                    yield chunk
            finally:  # also when the client goes: the native server then frees the slot
                await reply.aclose()
                held.close()

        return StreamingResponse(
            relay(),
            status_code=reply.status_code,
            headers={k: v for k, v in reply.headers.items() if k.lower() not in _HOP_HEADERS},
            background=BackgroundTask(reply.aclose),
        )

    methods = ["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]
    return Starlette(
        routes=[
            Route(INFO_PATH, model_info, methods=["GET"]),
            Route("/{path:path}", forward, methods=methods),
        ]
    )


def upstream_client(address: str, key: str) -> httpx.AsyncClient:
    """The client the guard forwards with: the native server's address and private key, no
    read timeout (an answer takes as long as it takes; a gone client cancels it)."""
    import httpx

    return httpx.AsyncClient(
        base_url=address,
        headers={"Authorization": f"Bearer {key}"},
        timeout=httpx.Timeout(10.0, read=None),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
    )
