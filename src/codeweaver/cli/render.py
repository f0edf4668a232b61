"""Terminal rendering: JSON output and progress bars for long commands.

An answer itself is shown by `cli.live`. JSON output escapes the control characters it
would otherwise keep raw, so no escape sequence from outside reaches the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.highlighter import JSONHighlighter
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

# JSON keeps C1 controls, DEL, bidirectional controls and lone surrogates raw; as \u
# escapes they mean the same and cannot recolour or reorder what a terminal shows.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def print_json(console: Console, payload: Any) -> None:
    """`payload` as JSON that holds the same data and no raw control character."""
    text = json.dumps(payload, ensure_ascii=False, default=str, indent=2)
    text = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    # A Text, not a str: a str would have its ":smile:" codes turned into emoji.
    console.print(JSONHighlighter()(Text(text)), soft_wrap=True)


class LazyBar:
    """A context for a progress bar that appears only once there is progress to show (no
    empty "0/? bytes" bar when nothing is done)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __enter__(self) -> LazyBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def show(self) -> None:
        if not self.progress.live.is_started:
            self.progress.start()


def byte_progress(console: Console, description: str) -> tuple[LazyBar, Callable[[int, int], None]]:
    """A progress bar for byte counts, shown from the first count, and the callback that
    feeds it."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task(description, total=None)
    bar = LazyBar(progress)

    def update(done: int, total: int) -> None:
        bar.show()
        progress.update(task, completed=done, total=total)

    return bar, update


def phase_progress(console: Console) -> tuple[LazyBar, Callable[[str, int, int], None]]:
    """A bar per phase of `(phase, done, total)` reports, shown from the first report."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )
    bar = LazyBar(progress)
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        bar.show()
        if phase not in tasks:
            tasks[phase] = progress.add_task(phase, total=total or None)
        progress.update(tasks[phase], completed=done, total=total or None)

    return bar, update
