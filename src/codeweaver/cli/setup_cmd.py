"""`codeweaver setup`: everything the first answer needs, now, and what comes next.

The weights are assembled and the sources' indexes built in the foreground, with a bar on a
terminal and a line per phase in a log. The docs entries' vectors take minutes on two
cores: they are embedded by a background process at low CPU priority (`--wait`:
here, now), which searches do without until they are ready. At the end it says how long it
took and the commands to use CodeWeaver, in a shell and in a coding agent.
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
                [sys.executable, "-m", "codeweaver", "setup", "--wait"],
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
