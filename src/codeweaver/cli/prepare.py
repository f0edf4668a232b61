"""Getting ready to answer, with progress: the model's weights when they must be assembled,
then the sources' indexes when they must be built.

On a terminal each phase has a bar; in a log (output not a terminal) each phase has a line
when it starts and one with its size and time when it ends. Nothing is shown when nothing is
done (a warm start).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from codeweaver.cli.common import safe

if TYPE_CHECKING:
    from rich.console import Console

    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings


class PhaseLines:
    """A `(phase, done, total)` progress callback that writes a line per phase to a log."""

    def __init__(self, console: Console, prefix: str = "") -> None:
        self.console = console
        self.prefix = prefix
        self._phase: str | None = None
        self._started = 0.0
        self._total = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self._phase:
            self.finish()
            self._phase, self._started = phase, time.monotonic()
            self._say(f"{phase}…")
        self._total = total

    def finish(self) -> None:
        """End the current phase's line (its size and time)."""
        if self._phase is None:
            return
        size = f"{self._total:,} items, " if self._total > 1 else ""
        self._say(f"{self._phase}: done ({size}{time.monotonic() - self._started:.1f} s)")
        self._phase = None

    def _say(self, text: str) -> None:
        self.console.print(safe(f"{self.prefix}{text}"), highlight=False, soft_wrap=True)


class ByteLines:
    """A `(bytes done, bytes total)` callback that writes a start and an end line."""

    def __init__(self, console: Console, what: str) -> None:
        self.console, self.what = console, what
        self._started: float | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._started is None:
            self._started = time.monotonic()
            self.console.print(f"{self.what}: {total / 1e9:.2f} GB…", highlight=False)
        if total and done >= total:
            took = time.monotonic() - self._started
            self.console.print(f"{self.what}: done ({took:.1f} s)", highlight=False)


def prepare_deps(settings: Settings, interactive: bool) -> Deps:
    """Build the dependencies and prepare the sources, showing what takes time."""
    from codeweaver.cli.common import console as make_console
    from codeweaver.cli.render import byte_progress, phase_progress
    from codeweaver.factory import build_deps, prepare_sources

    console = make_console(stderr=True)
    if interactive:
        weights, on_bytes = byte_progress(console, "assembling model weights")
        with weights:
            deps = build_deps(settings, progress=on_bytes)
    else:
        deps = build_deps(settings, progress=ByteLines(console, "assembling model weights"))
    if interactive:
        phases, on_phase = phase_progress(console)
        with phases:  # never shown when nothing is built
            problems = prepare_sources(deps, on_phase)
    else:
        lines = PhaseLines(console)
        problems = prepare_sources(deps, lines)
        lines.finish()
    for problem in problems:
        console.print(f"[yellow]warning:[/] {safe(problem)}", highlight=False)
    from codeweaver.api.startup import building_sources

    for name, line in building_sources(deps).items():  # work going on in the background
        console.print(f"[dim]{safe(name)}: {safe(line)}[/]", highlight=False)
    return deps
