"""One local model served by llama-cpp-python's OpenAI-compatible server (`llama_cpp.server`),
so several CodeWeaver processes share it as `openai:<alias>` with `OPENAI_BASE_URL`.

Concurrency, as llama-cpp-python 0.3.36's server implements it: every model route holds
one process-wide lock, so the server computes one completion at a time and queues the
others in arrival order, without limit and without ever answering 503; a queued request
whose client has gone is dropped when its turn comes. `GET /v1/models` takes the same
lock, so it waits behind every queued answer; the route added here, `GET
/codeweaver/model`, does not. The server's default `interrupt_requests=True` would end a
streaming answer as soon as another request waits, cutting one replica's answer whenever
another asks; it is turned off here. The server reads a schema to decode under only in
its own `response_format` (`{"type": "json_object", "schema": S}`) and refuses OpenAI's
(`{"type": "json_schema", "json_schema": {"schema": S}}`), which clients send: the
latter is turned into the former before the server reads the request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.config import Settings
from codeweaver.llm.registry import ModelConfigError, ModelRef, resolve_local_path
from codeweaver.llm.remote import INFO_PATH
from codeweaver.llm.weights import KNOWN_WEIGHTS, ProgressCallback

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

# llama-cpp-python's server computes one completion at a time per process (see above).
CONCURRENCY = 1


@dataclass(frozen=True)
class ServedModel:
    """What `model serve` runs: the weights, the name clients ask for, the runtime."""

    alias: str
    path: Path
    n_ctx: int
    n_threads: int

    def info(self) -> dict[str, Any]:
        """The JSON of `GET /codeweaver/model`."""
        return {"model": self.alias, "concurrency": CONCURRENCY, "context": self.n_ctx}


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
    return ServedModel(alias=alias, path=path, n_ctx=settings.llm_context, n_threads=threads)


def llama_settings(model: ServedModel, api_key: str | None = None) -> tuple[Any, Any]:
    """llama-cpp-python's server and model settings for `model`, the same runtime as the
    in-process model (`LocalChatModel`)."""
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    # `model_construct`: these are pydantic `BaseSettings`, which would also read bare
    # environment variables such as `API_KEY`, `CACHE` or `ROOT_PATH` (validating does too).
    server = ServerSettings.model_construct(api_key=api_key, interrupt_requests=False)
    llama = ModelSettings.model_construct(
        model=str(model.path),
        model_alias=model.alias,
        n_ctx=model.n_ctx,
        n_threads=model.n_threads,
        n_threads_batch=model.n_threads,
        # None: the chat template stored in the GGUF, as `Llama` picks in-process.
        chat_format=None,
        # The server's defaults differ from `Llama`'s here: keeping every token's logits
        # takes an n_ctx x vocabulary float array (2.5 GB for Qwen2.5 at 4096), and mlock
        # fails under the usual memlock limit.
        logits_all=False,
        use_mlock=False,
        verbose=False,
    )
    return server, llama


@contextmanager
def _without_config_file() -> Iterator[None]:
    # `create_app` replaces the settings given with `$CONFIG_FILE`'s when that is set.
    saved = os.environ.pop("CONFIG_FILE", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["CONFIG_FILE"] = saved


def create_model_server_app(model: ServedModel, api_key: str | None = None) -> FastAPI:
    """llama-cpp-python's server app with `model` loaded (this takes a few seconds), plus
    `GET /codeweaver/model`, behind the same key as the OpenAI routes."""
    from fastapi import Depends
    from llama_cpp.server.app import authenticate, create_app

    server_settings, model_settings = llama_settings(model, api_key)
    with _without_config_file():
        app: FastAPI = create_app(server_settings=server_settings, model_settings=[model_settings])
    info = model.info()

    async def model_info() -> dict[str, Any]:
        # No llama lock taken: answers at once even while a completion runs.
        return info

    app.add_middleware(OpenAIResponseFormat)
    app.add_api_route(
        INFO_PATH,
        model_info,
        methods=["GET"],
        dependencies=[Depends(authenticate)],
        summary="What this server computes and how many answers at once",
        tags=["CodeWeaver"],
    )
    return app


def llama_response_format(body: bytes) -> bytes:
    """A chat request with OpenAI's `json_schema` response format given in llama.cpp's
    form; any other body unchanged (the server judges it)."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    wanted = request.get("response_format") if isinstance(request, dict) else None
    if not isinstance(wanted, dict) or wanted.get("type") != "json_schema":
        return body
    spec = wanted.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
        return body
    request["response_format"] = {"type": "json_object", "schema": spec["schema"]}
    return json.dumps(request).encode()


class OpenAIResponseFormat:
    """ASGI middleware: chat requests reach llama.cpp's server with the response format
    it reads (see `llama_response_format`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chat = scope["type"] == "http" and scope["method"] == "POST"
        if not chat or not str(scope["path"]).endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # gone before the body arrived
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = llama_response_format(b"".join(chunks))
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        first: Message = {"type": "http.request", "body": body, "more_body": False}
        await self.app({**scope, "headers": headers}, _replay([first], receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that gives `messages` first, then the connection's own."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
