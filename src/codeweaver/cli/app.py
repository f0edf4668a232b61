"""The `codeweaver` command. Heavy libraries are imported inside commands, so `--help`
and argument errors stay instant."""

from __future__ import annotations

import asyncio
import logging
import os
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from codeweaver.cli.common import console as _console
from codeweaver.cli.common import fail as _fail
from codeweaver.cli.common import known_errors as _known_errors
from codeweaver.cli.common import safe as _safe
from codeweaver.cli.common import settings as _settings
from codeweaver.cli.terminal import terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings


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

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="Chat model as provider:model.")
]
ThreadOpt = Annotated[
    str | None, typer.Option("--thread", "-t", help="Conversation id to continue.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
# A string, not a Path: Typer turns "" into Path("."), the current folder.
ProjectOpt = Annotated[
    str | None,
    typer.Option(
        "--project",
        metavar="DIR",
        show_default=False,
        help="Your project: the installed docs read its Python environment. Default: the "
        "git repository of the working directory, else that folder (CODEWEAVER_PROJECT).",
    ),
]


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


STOPPED = "Stopped: the answer was cancelled."
CHAT_HELP = """Commands:
  /new    start a new thread (the model forgets this conversation)
  /help   this list
  /exit   leave (also /quit, or Ctrl-D)
Anything else is a question. Ctrl-C stops the answer being written."""


@app.callback()
def _global_options(ctx: typer.Context, project: ProjectOpt = None) -> None:
    # Options before the command. `--project` reaches every `Settings()`, including those
    # commands build themselves, as CODEWEAVER_PROJECT, restored when the command ends.
    if project is not None:
        folder = os.path.abspath(os.path.expanduser(project))
        if not project.strip() or not os.path.isdir(folder):
            _fail(f"--project: no such folder: '{project}'")
        previous = os.environ.get("CODEWEAVER_PROJECT")
        os.environ["CODEWEAVER_PROJECT"] = folder
        ctx.call_on_close(lambda: _restore_env("CODEWEAVER_PROJECT", previous))


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _prepare(settings: Settings, interactive: bool) -> Deps:
    from codeweaver.cli.prepare import prepare_deps

    return prepare_deps(settings, interactive)


async def _answer(
    deps: Deps, question: str, thread: str | None, as_json: bool, mode: str = "pipeline"
) -> str:
    """Answer `question` (checked already) as a turn of the service, and show it."""
    from codeweaver.cli.interrupt import leave_now, stoppable
    from codeweaver.cli.live import show_result
    from codeweaver.cli.turns import LOCAL_USER, REFUSALS, open_chat, refusal, run_turn

    console = _console()
    errors = _console(stderr=True)
    live = console.is_terminal and not as_json
    async with open_chat(deps) as chat:
        try:
            ticket = await chat.enter(thread, LOCAL_USER)
            run = run_turn(chat, question, ticket, thread, mode, errors, live)
            result, stopped = await stoppable(run)
        except REFUSALS as exc:
            _fail(refusal(exc, thread))
    if stopped or result is None:
        errors.print(f"[yellow]{STOPPED}[/]")
        leave_now(130)
    show_result(console, result, as_json)
    return result.thread_id


def _answered_at_once(question: str, settings: Settings, as_json: bool) -> bool:
    """Answer what the rules settle (three or more questions: declined; an English question
    already answered: from the cache) before the model, the sources or the docs index
    load; the pipeline answers a new thread the same way."""
    from codeweaver.agent.quick import cached_by_rules, declined_by_rules
    from codeweaver.cli.live import show_result

    result = declined_by_rules(question, settings.response_language)
    if result is None:
        try:
            result = cached_by_rules(question, settings)
        except Exception as exc:  # an unusable cache: the pipeline answers (and says why)
            logging.getLogger(__name__).info("quick cache lookup failed: %s", exc)
            result = None
    if result is None:
        return False
    show_result(_console(), result, as_json)
    return True


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
        from codeweaver.agent.rules.input_check import validate_question

        question = validate_question(question)  # the one check: before anything loads
        _check_thread(thread)
        settings = _settings(model=model, cache_enabled=False if no_cache else None)
        if (
            thread is None
            and mode is AnswerMode.pipeline
            and _answered_at_once(question, settings, as_json)
        ):
            return
        interactive = _console(stderr=True).is_terminal and not as_json
        deps = _prepare(settings, interactive)
        try:
            asyncio.run(_answer(deps, question, thread, as_json, mode.value))
        finally:
            _export_traces()
    except _known_errors() as exc:
        _fail(str(exc))


def _check_thread(thread: str | None) -> None:
    """A conversation id is a session id of the service, which the API can name too."""
    from codeweaver.memory.session_records import SESSION_ID

    if thread is not None and not SESSION_ID.match(thread):
        shown = terminal_safe(thread, single_line=True)
        _fail(f"--thread '{shown}': a conversation id is 1-64 letters, digits, '-' or '_'")


def _export_traces() -> None:
    # The answer's spans leave now, while the command still owns the process: an exit
    # hook also sends them, but not when something ends the process with `os._exit`.
    from codeweaver import telemetry

    telemetry.flush()


@app.command()
def chat(
    thread: ThreadOpt = None, model: ModelOpt = None, mode: ModeOpt = AnswerMode.pipeline
) -> None:
    """Talk in a persistent thread. /new starts a new thread, /exit leaves."""
    import uuid

    try:
        _check_thread(thread)
        settings = _settings(model=model)
        console = _console()
        deps = _prepare(settings, console.is_terminal)
        asyncio.run(_chat(deps, thread or uuid.uuid4().hex, console, mode.value))
    except _known_errors() as exc:
        _fail(str(exc))


async def _chat(deps: Deps, thread: str, console: Console, mode: str = "pipeline") -> None:
    import uuid

    from codeweaver.agent.rules.input_check import InvalidQuestionError
    from codeweaver.cli.interrupt import leave_now, stoppable
    from codeweaver.cli.live import plain_result, print_result
    from codeweaver.cli.turns import LOCAL_USER, REFUSALS, open_chat, refusal, run_turn

    shown = _safe(thread, single_line=True)
    console.print(f"[dim]thread {shown} — /help lists the commands[/]")
    interrupted = False
    async with open_chat(deps) as chat:
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
            if text in {"/help", "/?"}:
                console.print(CHAT_HELP, markup=False, highlight=False)
                continue
            if text.startswith("/") and " " not in text:
                console.print(f"[red]unknown command {_safe(text)}[/] — /help lists them")
                continue
            if not text:
                continue
            try:
                question, ticket = await chat.admit(text, thread, LOCAL_USER)
                run = run_turn(chat, question, ticket, thread, mode, console, console.is_terminal)
                result, stopped = await stoppable(run)
            except InvalidQuestionError as exc:
                console.print(f"[red]{_safe(exc)}[/]")
                continue
            except REFUSALS as exc:
                console.print(f"[red]{_safe(refusal(exc, thread))}[/]")
                continue
            if stopped or result is None:
                interrupted = True
                console.print(f"[yellow]{STOPPED}[/] Ask again, or /exit.")
            elif console.is_terminal:
                print_result(console, result)
            else:
                console.print(plain_result(result), markup=False, highlight=False)
    if interrupted:
        leave_now(0)  # a stopped model call may still be computing: do not wait for it


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


def _register_subcommands() -> None:
    from codeweaver.cli.cache_cmds import cache_app
    from codeweaver.cli.index_cmds import index_app
    from codeweaver.cli.lazy import lazy_typer
    from codeweaver.cli.mcp_cmd import mcp
    from codeweaver.cli.model_cmd import model_app
    from codeweaver.cli.serve_cmd import serve
    from codeweaver.cli.setup_cmd import setup

    app.command()(mcp)
    app.command()(serve)
    app.command()(setup)
    app.add_typer(cache_app, name="cache")
    # The measurement package's commands, loaded only when `eval` is invoked (`cli.lazy`).
    eval_app = lazy_typer(
        "codeweaver_eval.cli.app:eval_app",
        help="Measure intent classification and question splitting.",
        extra="eval",
    )
    app.add_typer(eval_app, name="eval")
    app.add_typer(index_app, name="index")
    app.add_typer(model_app, name="model")


_register_subcommands()


def main() -> None:
    # One OpenBLAS thread unless the user says otherwise (read when NumPy loads, so set
    # first): on two cores the model or another process always holds the other one, and
    # a query's embedding took 0.3 s with two threads against 0.01 s with one; a batch of
    # 512 docs entries 9.0 s against 5.8 s while the docs vectors were being built.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # httpx logs full request URLs at INFO, and the StackExchange key travels in the URL.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # What is being built in the background and how far: shown, also in a plain log.
    logging.getLogger("codeweaver.progress").setLevel(logging.INFO)
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
