"""`codeweaver cache …`: inspect and manage the answer cache and the HTTP cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from codeweaver.cli.common import console, fail, known_errors, safe, settings

if TYPE_CHECKING:
    from codeweaver.memory.cache import AnswerCache

cache_app = typer.Typer(help="Inspect and manage the answer cache.", no_args_is_help=True)


def _open_cache() -> AnswerCache:
    """The configured cache, or a clear error (a locked or unreadable store) and exit 2."""
    from codeweaver.memory.caches import build_cache

    try:
        return build_cache(settings())
    except known_errors() as exc:
        fail(str(exc))


@cache_app.command("stats")
def cache_stats() -> None:
    """Number of cached answers and hits."""
    stats = _open_cache().stats()
    console().print(f"entries: {stats.entries}  hits: {stats.hits}  store: {safe(stats.path)}")


@cache_app.command("list")
def cache_list(limit: Annotated[int, typer.Option(min=1)] = 20) -> None:
    """The most recent cached questions."""
    from datetime import datetime

    out = console()
    for entry in _open_cache().entries(limit):
        when = datetime.fromtimestamp(entry.created_at).isoformat(timespec="seconds")
        question = safe(entry.question, single_line=True)
        out.print(f"{when}  hits={entry.hits}  {question}", highlight=False)


@cache_app.command("forget")
def cache_forget(question: str) -> None:
    """Remove the cached answer of one canonical (English) question, or of the cached
    question a lookup of it would serve."""
    if not _open_cache().forget(question):
        fail(f"no cached answer for {question!r}", code=1)
    console().print("forgotten")


@cache_app.command("clear")
def cache_clear(
    http: Annotated[
        bool,
        typer.Option("--http", help="Empty the cache of online-source responses instead."),
    ] = False,
) -> None:
    """Remove every cached answer (with --http: every cached online-source response)."""
    if not http:
        console().print(f"removed {_open_cache().clear()} entries")
        return
    from codeweaver.sources.http_cache import clear_http_cache

    directory = settings().http_cache_dir
    try:
        cleared = clear_http_cache(directory)
    except OSError as exc:
        fail(f"could not clear the HTTP cache in {directory}: {exc}")
    entries = "?" if cleared.entries is None else str(cleared.entries)
    console().print(
        f"removed {entries} cached HTTP responses ({cleared.size} bytes) from {safe(directory)}",
        highlight=False,
    )
