"""One local model on llama.cpp's native server, shared by several CodeWeaver processes as
`openai:<alias>` with `OPENAI_BASE_URL` (`codeweaver model serve`).

The native server (`llama_runtime`) decodes `slots` answers at once with continuous batching
and queues the rest in arrival order. It listens on a private loopback port behind a random
key; clients reach it through the guard here, which:

- refuses any request a web page sends (it carries `Origin`; 403) and grants no CORS: the
  clients are CodeWeaver processes, never browsers;
- checks the key clients must send (`CODEWEAVER_MODEL_SERVER_KEY`), when one is set, from
  the headers before any of the body is read;
- forwards only the routes CodeWeaver's clients use (`_ROUTES`); llama.cpp's others take
  grammars in other shapes or manage its slots (404);
- refuses what the native server cannot serve safely with a 4xx, before it sees it: a body
  over `MAX_BODY_BYTES` (413, declared or counted as it arrives), JSON nested deeper than
  `MAX_BODY_DEPTH`, a raw grammar, and a JSON schema to decode under that is too large, asks
  for more repetitions than `MAX_SCHEMA_REPEAT` or holds more than `MAX_SCHEMA_REFS`
  references (400). llama.cpp builds grammars by recursion: a deep enough one overflows its
  stack and the whole process dies, stopping every replica's answers;
- answers `GET /codeweaver/model` with the model, its slots and context, at once;
- streams answers back as they come; a client that goes away frees its slot.

The Host check is the main API's, put around this app by `codeweaver model serve`.
llama.cpp reads OpenAI's `json_schema` response format natively, so it is forwarded as is.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
from collections.abc import AsyncIterator, Iterator
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
# llama.cpp turns a schema into a grammar by recursion: 10 000 chained `$ref`s or arrays
# nested 30 000 deep crash it. CodeWeaver's own schemas nest 5 deep and chain no `$ref`.
MAX_BODY_DEPTH = 64
MAX_SCHEMA_REFS = 100
_REPEAT_KEYS = frozenset(
    {"maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties",
     "maxContains", "minContains"}
)  # fmt: skip
# Where llama.cpp reads a JSON schema to build a grammar from; each is checked whole.
_SCHEMA_FIELDS = ("response_format", "json_schema", "tools")
# Raw grammars (GBNF) and their triggers: CodeWeaver sends none, and llama.cpp parses them
# by recursion with no bound (30 000 nested parentheses, 60 KB, crash it).
_GRAMMAR_FIELDS = frozenset({"grammar", "grammar_lazy", "grammar_triggers"})
# Routes that answer without a key, as the native server's own.
_PUBLIC = frozenset({"/health", "/v1/health"})
# What is forwarded: the routes CodeWeaver's clients use (chat, the model list, health).
_ROUTES = frozenset(
    {("POST", "/v1/chat/completions"), ("GET", "/v1/models")} | {("GET", p) for p in _PUBLIC}
)
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


def _depth(value: Any) -> int:
    """How deep JSON containers nest in `value`, counted without recursion."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return deepest


def _schema_keys(value: Any) -> Iterator[tuple[str, Any]]:
    """Every key of every object inside `value`, with its value (`value` nests shallowly)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield from item.items()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_schema(field: str, value: Any) -> None:
    if len(json.dumps(value)) > MAX_SCHEMA_BYTES:
        raise RefusedRequest(400, f"JSON schema in {field!r} over {MAX_SCHEMA_BYTES:,} bytes")
    refs = 0
    for key, item in _schema_keys(value):
        refs += key == "$ref"
        # A float or a huge number bounds a repetition as well: llama.cpp reads it as one.
        number = isinstance(item, int | float) and not isinstance(item, bool)
        if key in _REPEAT_KEYS and number and not item <= MAX_SCHEMA_REPEAT:
            raise RefusedRequest(
                400,
                f"JSON schema repetition bound {item} is over {MAX_SCHEMA_REPEAT} "
                "(maxItems, maxLength and the like)",
            )
    if refs > MAX_SCHEMA_REFS:
        raise RefusedRequest(400, f"JSON schema with over {MAX_SCHEMA_REFS} $ref")


def _parse_int(digits: str) -> int | float:
    # Past Python's digit limit `int` raises, and the body would go unchecked: as a float it
    # is still a number, infinite if need be, and bounds are judged on it.
    return int(digits) if len(digits) <= 64 else float(digits)


def check_request(body: bytes) -> None:
    """Raise `RefusedRequest` for a body the native server should not see. One Python cannot
    read as JSON is left for llama.cpp to refuse (400): its parser takes nothing Python's
    refuses, once numbers too long for `int` are read as floats."""
    if len(body) > MAX_BODY_BYTES:
        raise RefusedRequest(413, f"request body over {MAX_BODY_BYTES:,} bytes")
    too_deep = RefusedRequest(400, f"JSON nested deeper than {MAX_BODY_DEPTH} levels")
    try:
        request = json.loads(body, parse_int=_parse_int)
    except RecursionError:
        raise too_deep from None
    except ValueError:
        return
    if _depth(request) > MAX_BODY_DEPTH:
        raise too_deep
    if not isinstance(request, dict):
        return
    if raw := sorted(_GRAMMAR_FIELDS.intersection(request)):
        refused = ", ".join(raw)
        raise RefusedRequest(400, f"{refused}: no raw grammars; send a JSON schema instead")
    for field in _SCHEMA_FIELDS:
        if request.get(field) is not None:
            _check_schema(field, request[field])


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


def _relayed(header: str) -> bool:
    """Whether a header of the native server's reply reaches the client: not framing, and
    no CORS grant (llama.cpp sends one with credentials to whatever `Origin` it sees)."""
    name = header.lower()
    return name not in _HOP_HEADERS and not name.startswith("access-control-")


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

    def refusal(request: Request) -> Response | None:
        """The answer to a request refused on its headers alone, before its body is read."""
        if "origin" in request.headers:  # a web page's request (a preflight's too)
            return _error(403, "requests from web pages are refused", "permission_error")
        if api_key is None or request.url.path in _PUBLIC:
            return None
        sent = request.headers.get("authorization", "")
        token = sent[7:] if sent[:7].lower() == "bearer " else ""
        if hmac.compare_digest(token.encode(), api_key.encode()):
            return None
        return _error(401, "Invalid API Key", "authentication_error")

    async def model_info(request: Request) -> Response:
        return refusal(request) or JSONResponse(info)

    async def forward(request: Request) -> Response:
        if (refused := refusal(request)) is not None:
            return refused
        if (request.method, request.url.path) not in _ROUTES:
            return _error(404, "not a route of this server", "not_found_error")
        try:
            body = b""
            if request.method == "POST":
                body = await _read_body(request)
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
            headers={k: v for k, v in reply.headers.items() if _relayed(k)},
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
