"""Terminal rendering: live step progress, the answer as Markdown, numbered sources.

On a terminal the run is shown live; when output is piped only plain text is written,
so `codeweaver ask … | less` and scripts see the answer and its sources, nothing else.
Everything shown comes from outside (web pages, documents, the model), so it passes
`terminal_safe` first: no escape sequence in it reaches the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from rich.console import Console, Group
from rich.highlighter import JSONHighlighter
from rich.live import Live
from rich.markdown import Markdown
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.spinner import Spinner
from rich.text import Text

from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.cli.terminal import terminal_safe
from codeweaver.vocabulary import SearchResult, Step

_ICONS = {"think": "💭", "act": "→", "observe": "✓", "error": "✗"}
_STYLES = {"think": "cyan", "act": "yellow", "observe": "green", "error": "red"}
MAX_VISIBLE_STEPS = 14
# JSON keeps C1 controls, DEL and lone surrogates raw; as \u escapes it means the same.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff]")


def _line(value: object) -> str:
    return terminal_safe(str(value), single_line=True)


def format_source(n: int, source: SearchResult) -> str:
    parts = [f"[{n}] {_line(source['title'])}"]
    if source.get("url"):
        parts.append(_line(source["url"]))
    if source.get("reference"):
        parts.append(f"({_line(source['reference'])})")
    if source.get("attribution"):
        parts.append(f"— {_line(source['attribution'])}")
    return " ".join(parts)


def plain_result(result: RunResult) -> str:
    lines = [terminal_safe(result.answer).strip()]
    if result.sources:
        lines += ["", "Sources:"]
        lines += [format_source(n, s) for n, s in enumerate(result.sources, 1)]
    return "\n".join(lines)


def step_line(item: Step) -> Text:
    kind = item["kind"]
    line = Text(f"{_ICONS.get(kind, '·')} ", style=_STYLES.get(kind, ""))
    line.append(_line(item["node"]), style="bold")
    line.append(f"  {_line(item['message'])}")
    return line


class LiveRun:
    """Shows steps and the answer being written while a run streams."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.steps: list[Step] = []
        self.tokens: list[str] = []

    def _view(self) -> Group:
        shown = self.steps[-MAX_VISIBLE_STEPS:]
        rows: list[Any] = [step_line(s) for s in shown]
        if self.tokens:
            rows.append(
                Text(f"✎ writing the answer… {len(''.join(self.tokens))} chars", style="magenta")
            )
        else:
            rows.append(Spinner("dots", text=Text(" working", style="dim")))
        return Group(*rows)

    async def run(self, events: AsyncIterator[RunEvent]) -> RunResult:
        result: RunResult | None = None
        with Live(
            self._view(), console=self.console, refresh_per_second=8, transient=False
        ) as live:
            async for event in events:
                if event.kind == "step" and event.step is not None:
                    self.steps.append(event.step)
                elif event.kind == "token":
                    self.tokens.append(event.text)
                elif event.result is not None:
                    result = event.result
                live.update(self._view())
        if result is None:
            raise RuntimeError("the run ended without a result")
        return result


def print_result(console: Console, result: RunResult) -> None:
    console.print()
    console.print(Markdown(terminal_safe(result.answer) or "_(no answer)_"))
    if result.sources:
        console.print()
        console.print(Text("Sources", style="bold underline"))
        for n, source in enumerate(result.sources, 1):
            console.print(Text(format_source(n, source)), soft_wrap=True)


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
