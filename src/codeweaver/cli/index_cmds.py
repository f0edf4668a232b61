"""`codeweaver index …`: add, list and remove documents of the team knowledge base."""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codeweaver.cli.common import console as _console
from codeweaver.cli.common import fail as _fail

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.kb.report import IndexReport
    from codeweaver.kb.store import KnowledgeBase

index_app = typer.Typer(
    help="Manage the team knowledge base: documents searched by meaning.", no_args_is_help=True
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
# Strings, not Paths: Typer turns "" into Path("."), which would index the current folder.
PathsArg = Annotated[list[str], typer.Argument(help="Files or folders.", show_default=False)]
HiddenOpt = Annotated[
    bool,
    typer.Option(
        "--include-hidden",
        help="Also index hidden files and folders (.env, .github, …) inside the folders "
        "given; .git, node_modules and other dependency folders are always skipped.",
    ),
]


def _one_line(text: str) -> str:
    """A path, title or reason from outside as one line without escape sequences."""
    from codeweaver.cli.terminal import terminal_safe

    return terminal_safe(text, single_line=True)


def _markup(text: str) -> str:
    """`_one_line(text)` escaped for Rich markup: a "[red]" in a title stays text."""
    from rich.markup import escape

    return escape(_one_line(text))


def _check_given(paths: list[str], *, must_exist: bool) -> None:
    """Refuse empty paths (rc 2) and, with `must_exist`, paths that do not exist."""
    if any(not p.strip() for p in paths):
        _fail("empty path given: name a file or folder (use . for the current folder)")
    if must_exist:
        missing = [p for p in paths if _missing(p)]
        if missing:
            _fail(f"no such file or folder: {', '.join(map(_one_line, missing))}")


def _missing(path: str) -> bool:
    """Surely absent; a path that exists but cannot be read is reported by the scan."""
    try:
        os.stat(os.path.expanduser(path))
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def _known_errors() -> tuple[type[Exception], ...]:
    from pydantic import ValidationError

    from codeweaver.embeddings.base import EmbeddingError
    from codeweaver.memory.store_clients import VectorStoreError

    return (EmbeddingError, VectorStoreError, ValidationError)


def _open() -> tuple[Settings, KnowledgeBase]:
    from codeweaver.config import Settings
    from codeweaver.kb.store import KnowledgeBase

    settings = Settings()
    return settings, KnowledgeBase(settings)


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _print_report(report: IndexReport, verb: str) -> None:
    console = _console()
    styles = {
        "added": "green",
        "updated": "cyan",
        "removed": "yellow",
        "skipped": "magenta",
        "failed": "red",
    }
    for item in report.files:
        if item.outcome == "unchanged":
            continue
        style = styles[item.outcome]
        line = f"[{style}]{item.outcome:>8}[/]  {_markup(item.display_path)}"
        if item.chunks:
            line += f" [dim]({item.chunks} chunk{'s' if item.chunks != 1 else ''})[/]"
        if item.reason:
            line += f" — {_markup(item.reason)}"
        console.print(line, highlight=False)
    counts = report.counts()
    summary = " · ".join(f"{name} {counts[name]}" for name in counts)
    console.print(
        f"[bold]{verb}:[/] {summary}  [dim]({report.chunks_written} chunks written, "
        f"{report.seconds:.1f} s)[/]",
        highlight=False,
    )


@index_app.command("add")
def add(paths: PathsArg, as_json: JsonOpt = False, include_hidden: HiddenOpt = False) -> None:
    """Index files and folders (Markdown, reST, text, HTML, PDF, source code).

    Unchanged files are skipped; changed files have their chunks replaced. Inside folders,
    symlinks out of the folder, hidden files and FIFOs or devices are not read.
    """
    _check_given(paths, must_exist=True)
    from codeweaver.cli.render import phase_progress

    stderr = _console(stderr=True)
    interactive = stderr.is_terminal and not as_json
    bar, on_phase = phase_progress(stderr)

    try:
        _settings, kb = _open()
        with bar if interactive else nullcontext():
            report = kb.add(
                paths,
                progress=on_phase if interactive else None,
                include_hidden=include_hidden,
            )
    except _known_errors() as exc:
        _fail(str(exc))
    if as_json:
        _print_json(report.to_dict())
    else:
        _print_report(report, "indexed")
    counts = report.counts()
    not_read = counts["failed"] or counts["skipped"]
    if not_read and not (counts["added"] or counts["updated"] or counts["unchanged"]):
        raise typer.Exit(1)  # nothing given could be indexed


@index_app.command("list")
def list_files(as_json: JsonOpt = False) -> None:
    """Indexed files with their chunk counts and when they were indexed."""
    try:
        settings, kb = _open()
        from codeweaver.kb.store import indexed_chunk_count

        # An empty store is answered without loading the embedding model.
        files = kb.list_files() if indexed_chunk_count(settings) else []
    except _known_errors() as exc:
        _fail(str(exc))
    if as_json:
        _print_json([f.to_dict() for f in files])
        return
    console = _console()
    if not files:
        console.print("knowledge base is empty (codeweaver index add PATH)")
        return
    from datetime import datetime

    from rich.table import Table
    from rich.text import Text

    table = Table("file", "chunks", "indexed", "title")
    for f in files:
        when = datetime.fromtimestamp(f.indexed_at).isoformat(sep=" ", timespec="seconds")
        # Text cells: a title is the file's own words, never markup or escape sequences.
        path, title = Text(_one_line(f.display_path)), Text(_one_line(f.title))
        table.add_row(path, str(f.chunks), when, title)
    console.print(table)
    console.print(f"{len(files)} files, {sum(f.chunks for f in files)} chunks", highlight=False)


@index_app.command("remove")
def remove(paths: PathsArg, as_json: JsonOpt = False) -> None:
    """Remove the chunks of files, or of every file under folders (the files may be gone)."""
    _check_given(paths, must_exist=False)
    try:
        _settings, kb = _open()
        report = kb.remove(paths)
    except _known_errors() as exc:
        _fail(str(exc))
    if as_json:
        _print_json(report.to_dict())
    else:
        _print_report(report, "removed")
    not_indexed = [_one_line(f.display_path) for f in report.of("failed")]
    if not_indexed and not as_json:
        _fail(f"not in the knowledge base: {', '.join(not_indexed)}")
    if not_indexed:
        raise typer.Exit(2)
