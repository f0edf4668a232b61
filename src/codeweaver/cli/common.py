"""What every command shares: the console, settings, terminal-safe text and failing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import typer

from codeweaver.cli.terminal import terminal_safe

if TYPE_CHECKING:
    import socket

    from rich.console import Console

    from codeweaver.config import Settings


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr)


def settings(**explicit: Any) -> Settings:
    """Settings with the options given on the command line (None = not given)."""
    from codeweaver.config import Settings

    return Settings(**{k: v for k, v in explicit.items() if v is not None})


def safe(text: object, single_line: bool = False) -> str:
    """Outside text for a Rich markup string: no terminal escapes, no markup."""
    from rich.markup import escape

    return escape(terminal_safe(str(text), single_line=single_line))


def fail(message: str, code: int = 2) -> NoReturn:
    console(stderr=True).print(f"[bold red]error:[/] {safe(message)}", highlight=False)
    raise typer.Exit(code)


def known_errors() -> tuple[type[Exception], ...]:
    """Errors whose message is the whole story for the user: shown without a traceback."""
    from pydantic import ValidationError

    from codeweaver.agent.rules.input_check import InvalidQuestionError
    from codeweaver.llm.registry import ModelConfigError
    from codeweaver.llm.weights import WeightsError
    from codeweaver.memory.cache import CacheStoreError
    from codeweaver.memory.checkpoint import ThreadStoreError
    from codeweaver.memory.store_clients import VectorStoreError

    return (
        InvalidQuestionError,
        ModelConfigError,
        WeightsError,
        CacheStoreError,
        ThreadStoreError,
        VectorStoreError,
        ValidationError,
    )


class BindingError(ValueError):
    """The address cannot be served as asked; the message says what to do."""


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, taken before the model loads so a busy port fails at once."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise BindingError(f"unknown host {host!r}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise BindingError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
