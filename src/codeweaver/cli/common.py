"""What every command shares: the console, settings, terminal-safe text and failing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import typer

from codeweaver.cli.terminal import terminal_safe

if TYPE_CHECKING:
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

    from codeweaver.agent.input_check import InvalidQuestionError
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
