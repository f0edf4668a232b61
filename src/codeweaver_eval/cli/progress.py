"""One progress display for the long `eval` commands.

On a terminal, a Rich bar on stderr; in a log (stderr not a terminal), a plain line at
every step of `every` items (a tenth of the way by default); nothing when `quiet` (the
command prints JSON). The report callback takes `(done, total)` and, optionally, what is
happening (`"done"` or a phase such as `"answering with the pipeline"`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer

Report = Callable[..., None]
DONE = frozenset({"", "done", "kept from the earlier run"})


@contextmanager
def progress(
    total: int, *, quiet: bool, label: str = "evaluating", every: int | None = None
) -> Iterator[Report | None]:
    """Yield the callback to report progress with (None when `quiet`)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    if quiet:
        yield None
        return
    console = Console(stderr=True)
    if not console.is_terminal:
        step = every or max(1, total // 10)

        def line(done: int, _total: int, what: str = "") -> None:
            if what in DONE and (done % step == 0 or done == total):
                typer.echo(f"{label}: {done}/{total} {what or 'done'}", err=True)

        yield line
        return
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def update(done: int, _total: int, what: str = "") -> None:
            bar.update(task, completed=done, description=label if what in DONE else what)

        yield update
