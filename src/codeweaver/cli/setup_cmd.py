"""`codeweaver setup`: everything the first answer needs, now, and what comes next.

The weights are assembled and the sources' indexes built in the foreground, with a bar on a
terminal and a line per phase in a log. The docs entries' vectors take minutes on two
cores: they are embedded by a background process at low CPU priority (`--wait`:
here, now), which searches do without until they are ready. At the end it says how long it
took and the commands to use CodeWeaver, in a shell and in a coding agent.

Before the indexes are built, when the project's Python has no HTML docs on the machine,
they are fetched without root where the system can (`python_docs.fetch`: the distribution's
package, unpacked into the cache), phase by phase; when it cannot, a warning says why and
setup goes on (`--no-python-docs`: not tried).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from codeweaver.config import Settings

EXAMPLE = "How do I read a file line by line in Python?"
# Low, not the lowest: a step of it can hold up an answer (`llm.busy`), so it must not starve.
BACKGROUND_NICE = 10
LOG_NAME = "docs-vectors.log"


def setup(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Chat model as provider:model.")
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="Embed the docs entries here and now instead of in the background."
        ),
    ] = False,
    no_python_docs: Annotated[
        bool,
        typer.Option(
            "--no-python-docs",
            help="Do not download Python's HTML docs when they are missing (about 13 MB, "
            "with apt-get, no root needed).",
        ),
    ] = False,
) -> None:
    """Assemble the local model and build the docs indexes now, with progress."""
    from codeweaver.cli.common import console, fail, known_errors, safe
    from codeweaver.cli.common import settings as make_settings
    from codeweaver.cli.prepare import PhaseLines, prepare_deps
    from codeweaver.sources.base import ReportsBuilding

    err = console(stderr=True)
    started = time.monotonic()
    try:
        settings = make_settings(model=model)
        if not no_python_docs:
            get_python_docs(settings, err)
        deps = prepare_deps(settings, err.is_terminal)
        docs = deps.sources.get("installed_docs")
        ensure = getattr(docs, "ensure_index", None)
        if docs is not None and ensure is not None and docs.status().usable:
            if wait:
                lines = PhaseLines(err)
                ensure(lines)
                lines.finish()
            elif isinstance(docs, ReportsBuilding) and docs.building() is not None:
                # The vectors are missing (prepare has just looked): embed them elsewhere.
                _embed_in_background(settings, err)
    except known_errors() as exc:
        fail(str(exc))
    took = time.monotonic() - started
    out = console()
    out.print(f"ready in {took:.0f} s: {safe(settings.model)}", highlight=False)
    for line in next_steps(Path(sys.argv[0])):
        out.print(safe(line), highlight=False, soft_wrap=True)


def _embed_in_background(settings: Settings, err: Console) -> None:
    """Hand the docs vectors to a detached `setup --wait` at low priority, which
    waits for any other builder and resumes what was embedded before."""
    from codeweaver.cli.common import safe

    log = settings.cache_dir / "logs" / LOG_NAME
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as handle:
            process = subprocess.Popen(
                # This run has tried the Python docs already: the log gets no second try.
                [sys.executable, "-m", "codeweaver", "setup", "--wait", "--no-python-docs"],
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives this command and its terminal
                preexec_fn=_low_priority if sys.platform != "win32" else None,
                env={**os.environ, "CODEWEAVER_MODEL": settings.model},
            )
    except OSError as exc:
        err.print(f"[yellow]warning:[/] cannot start the background embedding: {safe(exc)}")
        return
    err.print(
        safe(
            f"docs vectors: embedding in the background (process {process.pid}, low "
            f"priority; searches work meanwhile). `codeweaver doctor` shows how far; log: {log}"
        ),
        highlight=False,
        soft_wrap=True,
    )


def project_python(settings: Settings) -> str:
    """The version of the Python whose docs the `python_docs` source wants: the project
    environment's, else CodeWeaver's own (as the source's factory decides)."""
    from codeweaver.sources.installed_docs.collect import python_version as own
    from codeweaver.sources.installed_docs.project import find_project_for

    env = find_project_for(settings).env
    return env.version if env is not None else own()


def get_python_docs(settings: Settings, err: Console) -> Path | None:
    """The HTML folder of the project's Python docs, fetched into the cache when missing
    and the system can (`python_docs.fetch`); None, with a warning saying why and what to
    do, when it cannot. Not tried when CODEWEAVER_PYTHON_DOCS names a folder (that one is
    used, or its absence reported by the source) or the source is disabled."""
    from codeweaver.cli.common import safe
    from codeweaver.sources.python_docs.fetch import FetchError, fetch_docs, megabytes
    from codeweaver.sources.python_docs.sections import find_docs

    if settings.python_docs is not None or not settings.source_enabled("python_docs"):
        return None
    version = project_python(settings)
    found, _version = find_docs(version, cache_dir=settings.cache_dir)
    if found is not None:
        return found
    minor = ".".join(version.split(".")[:2])

    def say(line: str) -> None:
        err.print(safe(f"python docs: {line}"), highlight=False, soft_wrap=True)

    say(f"Python {minor}'s HTML docs are not on this machine; fetching them")
    try:
        fetched = fetch_docs(settings.cache_dir, minor, say=say)
    except FetchError as exc:
        err.print(
            f"[yellow]warning:[/] {safe(f'python docs: {exc}. Setup goes on without them.')}",
            highlight=False,
            soft_wrap=True,
        )
        return None
    say(
        f"Python {fetched.docs_version}'s docs ready in {fetched.html_dir} "
        f"({megabytes(fetched.download_bytes)} downloaded, {fetched.seconds:.0f} s)"
    )
    return fetched.html_dir


def _low_priority() -> None:
    os.nice(BACKGROUND_NICE)


def next_steps(program: Path) -> list[str]:
    """The commands to use CodeWeaver from here: this executable by its absolute path (a
    virtualenv need not be activated), and the MCP line for a coding agent."""
    exe = program if program.name == "codeweaver" else Path(sys.executable).parent / "codeweaver"
    exe = exe.absolute()
    shown = shlex.quote(str(exe))
    lines = [
        "next:",
        f"  {shown} ask {shlex.quote(EXAMPLE)}",
        f"  {shown} chat                 # a conversation",
        f"  {shown} serve                # the web page and HTTP API at http://127.0.0.1:8000",
        f"  {shown} doctor               # what is set up, and what is still being built",
    ]
    venv = exe.parent.parent
    if (venv / "bin" / "activate").is_file():
        lines.append(
            f"  (or `source {shlex.quote(str(venv / 'bin' / 'activate'))}`, then `codeweaver …`)"
        )
    lines += [
        "in a coding agent (MCP over stdio):",
        f"  claude mcp add codeweaver -- {shown} mcp",
        f'  {{"mcpServers": {{"codeweaver": {{"command": "{exe}", "args": ["mcp"]}}}}}}',
    ]
    return lines
