"""`codeweaver model serve`: one local model on llama.cpp's native OpenAI-compatible server,
shared by every CodeWeaver process pointed at it (`openai:<alias>` + `OPENAI_BASE_URL`)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated

import typer

from codeweaver.cli.common import BindingError as BindingError
from codeweaver.cli.common import bind

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from pydantic import SecretStr
    from rich.console import Console

    from codeweaver.config import Settings
    from codeweaver.llm.model_server import ServedModel

KEY_ENV = "CODEWEAVER_MODEL_SERVER_KEY"
MIN_KEY_LENGTH = 16

model_app = typer.Typer(
    help="Run the embedded model as a server that several CodeWeaver processes share.",
    no_args_is_help=True,
)


def server_key(host: str, configured: SecretStr | None) -> str | None:
    """The key clients must send (CODEWEAVER_MODEL_SERVER_KEY): required, and long
    enough not to be guessed, when the server listens off loopback."""
    from codeweaver.api.auth import is_loopback

    key = configured.get_secret_value().strip() if configured is not None else ""
    if is_loopback(host):
        return key or None
    if not key:
        raise BindingError(
            f"refusing to listen on {host} without {KEY_ENV}: anyone who can reach it "
            f"could use the model. Set it ({MIN_KEY_LENGTH}+ characters; replicas send it as "
            "OPENAI_API_KEY) or bind to 127.0.0.1."
        )
    if len(key) < MIN_KEY_LENGTH:
        raise BindingError(f"{KEY_ENV} must be at least {MIN_KEY_LENGTH} characters")
    return key


def base_url(host: str, port: int) -> str:
    """The URL replicas use: a wildcard address is reached by this machine's name."""
    import socket

    if host in {"0.0.0.0", "::", ""}:
        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def ready_lines(model: ServedModel, url: str, keyed: bool) -> list[str]:
    """What the server prints once it answers: where, and the environment of a replica."""
    at_once = "one answer at a time" if model.slots == 1 else f"{model.slots} answers at once"
    lines = [
        f"model server ready: {model.alias} at {url} ({at_once}, others queue)",
        f"CODEWEAVER_MODEL=openai:{model.alias}",
        f"OPENAI_BASE_URL={url}",
    ]
    if keyed:
        lines.append(f"(replicas also set OPENAI_API_KEY to the value of {KEY_ENV})")
    return lines


@model_app.command("serve")
def serve(
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="local:<alias> or local:/path/model.gguf"),
    ] = None,
    host: Annotated[
        str, typer.Option(help=f"Address to listen on; off loopback needs {KEY_ENV}.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8001,
    threads: Annotated[
        int | None, typer.Option(min=1, help="llama.cpp threads (default: all cores).")
    ] = None,
    context: Annotated[
        int | None,
        typer.Option(min=256, help="Context window of each answer in tokens (default 4096)."),
    ] = None,
    slots: Annotated[
        int | None,
        typer.Option(min=1, max=64, help="Answers decoded at once (default 4)."),
    ] = None,
) -> None:
    """Serve the local model over OpenAI's API for several CodeWeaver processes.

    Several answers are decoded at once (continuous batching); more wait in line. Replicas
    use the lines it prints.
    """
    from codeweaver.cli.common import console, fail, known_errors, safe, settings

    err = console(stderr=True)
    try:
        chosen = settings(
            model=model, llm_threads=threads, llm_context=context, model_server_slots=slots
        )
        key = server_key(host, chosen.model_server_key)
        sock = bind(host, port)
        try:
            served = _load(chosen.model, chosen, err)
        except BaseException:
            sock.close()
            raise
    except BindingError as exc:
        fail(str(exc))
    except known_errors() as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        err.print("stopped")
        return

    out = console()
    lines = ready_lines(served, base_url(host, port), key is not None)

    def announce() -> None:
        for line in lines:  # unwrapped: the env lines are copied as they are
            out.print(safe(line), highlight=False, soft_wrap=True)

    from codeweaver.api.security import allowed_hosts

    hosts = allowed_hosts(host, chosen.allowed_host_list)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled
        _run(served, key, hosts, sock, announce)
    err.print("model server stopped")


def _load(spec: str, chosen: Settings, err: Console) -> ServedModel:
    """Assemble the weights (with a bar on a terminal) and describe the model."""
    from contextlib import nullcontext

    from codeweaver.cli.render import byte_progress
    from codeweaver.llm.model_server import served_model

    bar, on_bytes = byte_progress(err, "assembling model weights")
    with bar if err.is_terminal else nullcontext():
        return served_model(spec, chosen, on_bytes if err.is_terminal else None)


def _run(
    served: ServedModel,
    key: str | None,
    hosts: list[str] | None,
    sock: socket.socket,
    announce: Callable[[], None],
) -> None:
    """Load the model into llama.cpp's native server and serve it through the guard until
    Ctrl-C or SIGTERM; `hosts`: the `Host` names it answers for (None: any)."""
    import logging
    import secrets

    import uvicorn

    from codeweaver.api.security import HostCheckMiddleware, SecurityHeadersMiddleware
    from codeweaver.cli.common import console
    from codeweaver.llm.llama_runtime import start_server
    from codeweaver.llm.model_server import create_model_server_app, upstream_client

    private = secrets.token_urlsafe(24)
    with console(stderr=True).status(f"loading {served.alias} ({served.path.name})"):
        native = start_server(served.runtime(), api_key=private)
    guard = create_model_server_app(
        served, upstream_client(native.listening_address, private), api_key=key
    )
    # The main API's rule: a loopback server without a key is otherwise open to any web
    # page through DNS rebinding (a foreign name that resolves to 127.0.0.1).
    app = SecurityHeadersMiddleware(HostCheckMiddleware(guard, hosts))

    class _Server(uvicorn.Server):
        def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
            super().__init__(config)
            self._on_ready = on_ready

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                self._on_ready()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Each request the stop cuts off would log a traceback; the stop is the news.
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            await super().shutdown(sockets)

    # Access lines would interleave with the ready lines on every replica's request.
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
    try:
        _Server(config, announce).run(sockets=[sock])
    finally:
        del native  # stops llama.cpp's loop and frees the model
