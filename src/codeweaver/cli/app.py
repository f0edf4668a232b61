"""The `codeweaver` command. Heavy libraries are imported inside commands, so `--help`
and argument errors stay instant."""

from __future__ import annotations

import asyncio
import logging
import sys
from contextlib import nullcontext
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from codeweaver.cli.terminal import terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings
    from codeweaver.memory.cache import AnswerCache


def _not_utf8(args: list[str]) -> str | None:
    """The first argument that is not valid UTF-8, its bad bytes shown escaped. Python
    hands undecodable argv bytes over as lone surrogates, which could not be printed,
    stored or sent to the model."""
    for arg in args:
        if any("\ud800" <= c <= "\udfff" for c in arg):
            try:
                raw = arg.encode("utf-8", "surrogateescape")  # back to the bytes typed
            except UnicodeEncodeError:  # a surrogate not made from a byte
                raw = arg.encode("utf-8", "backslashreplace")
            shown = raw.decode("utf-8", "backslashreplace")
            return shown if len(shown) <= 80 else f"{shown[:77]}..."
    return None


class _Commands(TyperGroup):
    """The command group, refusing arguments that are not UTF-8 before any command runs."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if (bad := _not_utf8(args)) is not None:
            _fail(
                f"the argument '{terminal_safe(bad, single_line=True)}' is not valid UTF-8 "
                "text (check the encoding of your terminal or script)"
            )
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_Commands,
    name="codeweaver",
    help="Answers developers' questions from many sources at once, with citations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cache_app = typer.Typer(help="Inspect and manage the answer cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="Chat model as provider:model.")
]
ThreadOpt = Annotated[
    str | None, typer.Option("--thread", "-t", help="Conversation id to continue.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


class AnswerMode(StrEnum):
    """The runner's modes, repeated here so `--help` does not import the agent."""

    pipeline = "pipeline"
    librarian = "librarian"


ModeOpt = Annotated[
    AnswerMode,
    typer.Option(
        "--mode",
        help="pipeline: plan, search every source at once, check the answer. "
        "librarian: a tool-using loop of at most 10 steps. Both continue the same thread.",
    ),
]


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr)


def _settings(**explicit: Any) -> Settings:
    from codeweaver.config import Settings

    return Settings(**{k: v for k, v in explicit.items() if v is not None})


def _safe(text: object, single_line: bool = False) -> str:
    """Outside text for a Rich markup string: no terminal escapes, no markup."""
    from rich.markup import escape

    return escape(terminal_safe(str(text), single_line=single_line))


def _fail(message: str, code: int = 2) -> None:
    _console(stderr=True).print(f"[bold red]error:[/] {_safe(message)}", highlight=False)
    raise typer.Exit(code)


def _known_errors() -> tuple[type[Exception], ...]:
    from pydantic import ValidationError

    from codeweaver.agent.runner import InvalidQuestionError
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


def _prepare(settings: Settings, interactive: bool) -> Deps:
    """Build the dependencies, showing progress for weights assembly and index builds."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from codeweaver.cli.render import byte_progress
    from codeweaver.factory import build_deps, prepare_sources

    console = _console(stderr=True)
    bar, on_bytes = byte_progress(console, "assembling model weights")
    with bar if interactive else nullcontext():
        deps = build_deps(settings, progress=on_bytes if interactive else None)
    phases = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def on_phase(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = phases.add_task(phase, total=total or None)
        phases.update(tasks[phase], completed=done, total=total or None)

    with phases if interactive else nullcontext():
        problems = prepare_sources(deps, on_phase if interactive else None)
    for problem in problems:
        console.print(f"[yellow]warning:[/] {_safe(problem)}", highlight=False)
    return deps


async def _answer(
    deps: Deps, question: str, thread: str | None, as_json: bool, mode: str = "pipeline"
) -> str:
    from codeweaver.cli.render import LiveRun, plain_result, print_json, print_result
    from codeweaver.factory import open_assistant

    console = _console()
    async with open_assistant(deps) as assistant:
        if as_json:
            result = await assistant.ask(question, thread, mode)
            print_json(console, result.to_dict())
        elif console.is_terminal:
            run = assistant.stream(question, thread, mode)
            result = await LiveRun(_console(stderr=True)).run(run)
            print_result(console, result)
        else:
            result = await assistant.ask(question, thread, mode)
            sys.stdout.write(plain_result(result) + "\n")
    return result.thread_id


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question (Korean or English).")],
    thread: ThreadOpt = None,
    model: ModelOpt = None,
    as_json: JsonOpt = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the answer cache.")] = False,
    mode: ModeOpt = AnswerMode.pipeline,
) -> None:
    """Answer one question, citing its sources."""
    try:
        from codeweaver.agent.runner import validate_question

        question = validate_question(question)
        settings = _settings(model=model, cache_enabled=False if no_cache else None)
        interactive = _console(stderr=True).is_terminal and not as_json
        deps = _prepare(settings, interactive)
        asyncio.run(_answer(deps, question, thread, as_json, mode.value))
    except _known_errors() as exc:
        _fail(str(exc))


@app.command()
def chat(
    thread: ThreadOpt = None, model: ModelOpt = None, mode: ModeOpt = AnswerMode.pipeline
) -> None:
    """Talk in a persistent thread. /new starts a new thread, /exit leaves."""
    import uuid

    try:
        settings = _settings(model=model)
        console = _console()
        deps = _prepare(settings, console.is_terminal)
        asyncio.run(_chat(deps, thread or uuid.uuid4().hex, console, mode.value))
    except _known_errors() as exc:
        _fail(str(exc))


async def _chat(deps: Deps, thread: str, console: Console, mode: str = "pipeline") -> None:
    import uuid

    from codeweaver.agent.runner import InvalidQuestionError
    from codeweaver.cli.render import LiveRun, plain_result, print_result
    from codeweaver.factory import open_assistant

    shown = _safe(thread, single_line=True)
    console.print(f"[dim]thread {shown} — /new for a new thread, /exit to leave[/]")
    async with open_assistant(deps) as assistant:
        while True:
            try:
                line = await asyncio.to_thread(console.input, "[bold blue]you>[/] ")
            except (EOFError, KeyboardInterrupt):
                break
            except UnicodeDecodeError:  # bytes that are not UTF-8 on standard input
                console.print("[red]that line is not valid UTF-8 text[/]")
                continue
            text = line.strip()
            if text in {"/exit", "/quit"}:
                break
            if text == "/new":
                thread = uuid.uuid4().hex
                console.print(f"[dim]new thread {thread}[/]")
                continue
            if not text:
                continue
            try:
                if console.is_terminal:
                    result = await LiveRun(console).run(assistant.stream(text, thread, mode))
                    print_result(console, result)
                else:
                    result = await assistant.ask(text, thread, mode)
                    console.print(plain_result(result), markup=False, highlight=False)
            except InvalidQuestionError as exc:
                console.print(f"[red]{_safe(exc)}[/]")


@app.command()
def setup(model: ModelOpt = None) -> None:
    """Assemble the local model and build the installed-docs index now, with progress."""
    try:
        settings = _settings(model=model)
        _prepare(settings, interactive=True)
    except _known_errors() as exc:
        _fail(str(exc))
    _console().print(f"ready: {_safe(settings.model)}")


@app.command()
def doctor(
    as_json: JsonOpt = False,
    model: ModelOpt = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Also search each configured online source once, for real: latency, "
            "results, quota left or why it failed. Exit code 1 if one fails.",
        ),
    ] = False,
) -> None:
    """Show the model, its weights, each source, the stores and which keys are set."""
    from codeweaver.cli.doctor import (
        collect_live,
        collect_report,
        live_json,
        render_live,
        render_report,
    )

    settings = _settings(model=model)
    report = collect_report(settings)
    probes = collect_live(settings) if live else None
    if as_json:
        from codeweaver.cli.render import print_json

        print_json(_console(), report if probes is None else {**report, "live": live_json(probes)})
    else:
        render_report(_console(), report)
        if probes is not None:
            render_live(_console(), probes)
    if probes is not None and any(p.failed for p in probes):
        raise typer.Exit(1)


def _open_cache() -> AnswerCache:
    """The configured cache, or a clear error (a locked or unreadable store) and exit 2."""
    from codeweaver.factory import build_cache

    try:
        return build_cache(_settings())
    except _known_errors() as exc:
        _fail(str(exc))
        raise  # unreachable: _fail exits


@cache_app.command("stats")
def cache_stats() -> None:
    """Number of cached answers and hits."""
    stats = _open_cache().stats()
    _console().print(f"entries: {stats.entries}  hits: {stats.hits}  store: {_safe(stats.path)}")


@cache_app.command("list")
def cache_list(limit: Annotated[int, typer.Option(min=1)] = 20) -> None:
    """The most recent cached questions."""
    from datetime import datetime

    console = _console()
    for entry in _open_cache().entries(limit):
        when = datetime.fromtimestamp(entry.created_at).isoformat(timespec="seconds")
        question = _safe(entry.question, single_line=True)
        console.print(f"{when}  hits={entry.hits}  {question}", highlight=False)


@cache_app.command("forget")
def cache_forget(question: str) -> None:
    """Remove the cached answer of one canonical (English) question, or of the cached
    question a lookup of it would serve."""
    if not _open_cache().forget(question):
        _fail(f"no cached answer for {question!r}", code=1)
    _console().print("forgotten")


@cache_app.command("clear")
def cache_clear(
    http: Annotated[
        bool,
        typer.Option("--http", help="Empty the cache of online-source responses instead."),
    ] = False,
) -> None:
    """Remove every cached answer (with --http: every cached online-source response)."""
    if not http:
        _console().print(f"removed {_open_cache().clear()} entries")
        return
    from codeweaver.sources.http_cache import clear_http_cache

    directory = _settings().http_cache_dir
    try:
        cleared = clear_http_cache(directory)
    except OSError as exc:
        _fail(f"could not clear the HTTP cache in {directory}: {exc}")
        return  # unreachable: _fail exits
    entries = "?" if cleared.entries is None else str(cleared.entries)
    _console().print(
        f"removed {entries} cached HTTP responses ({cleared.size} bytes) from {_safe(directory)}",
        highlight=False,
    )


def _register_subcommands() -> None:
    from codeweaver.cli import eval_answers_cmd  # noqa: F401  (registers `eval answers`)
    from codeweaver.cli.eval_cmds import eval_app
    from codeweaver.cli.index_cmds import index_app
    from codeweaver.cli.serve_cmd import serve

    app.command()(serve)
    app.add_typer(eval_app, name="eval")
    app.add_typer(index_app, name="index")


_register_subcommands()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # httpx logs full request URLs at INFO, and the StackExchange key travels in the URL.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
