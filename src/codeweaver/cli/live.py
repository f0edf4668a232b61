"""An answer on a terminal: its steps in words, the draft as it is written, then the
checked answer with its numbered sources.

The steps (`presentation.progress`) are printed as they come and stay in the scrollback.
The draft streams token by token in a live region under them; when the run ends the
region goes and the checked answer is printed in its place, as Markdown, with the cited
sources listed and the others collapsed into one line. When output is piped, only the
answer and its sources are written, as plain text. Everything shown came from outside
(pages, documents, the model): it passes `terminal_safe` first.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.agent.user_text import say
from codeweaver.cli.render import print_json
from codeweaver.cli.terminal import terminal_safe
from codeweaver.presentation.progress import Progress, ProgressLine
from codeweaver.presentation.sources import SourceView, plain_item, source_views
from codeweaver.presentation.ticks import with_ticks
from codeweaver.words.language import detect_language

# The draft shown live: its last lines, so the region never outgrows the terminal.
DRAFT_LINES = 12
# How often a run without news is looked at (to say the searches under way).
TICK_SECONDS = 0.5


def _views(result: RunResult) -> list[SourceView]:
    return source_views(result.answer, result.sources, detect_language(result.question))


def _also(views: list[SourceView], language: str) -> str:
    names = "; ".join(f"[{v.n}] {v.title}" for v in views if not v.cited)
    return say("also_retrieved", language, names=names) if names else ""


def plain_result(result: RunResult) -> str:
    """The answer and its sources as plain text (output piped to a file or a program)."""
    language = detect_language(result.question)
    views = _views(result)
    lines = [terminal_safe(result.answer).strip()]
    if views:
        lines += ["", f"{say('sources_heading', language)}:"]
        lines += [plain_item(v) for v in views if v.cited]
        if also := _also(views, language):
            lines.append(also)
    return "\n".join(lines)


def print_result(console: Console, result: RunResult) -> None:
    """The checked answer as Markdown, then its sources."""
    language = detect_language(result.question)
    views = _views(result)
    console.print()
    console.print(Markdown(terminal_safe(result.answer) or "_(no answer)_"))
    if not views:
        return
    console.print()
    console.print(Text(say("sources_heading", language), style="bold underline"))
    for view in views:
        if view.cited:
            console.print(Text(plain_item(view)), soft_wrap=True)
    if also := _also(views, language):
        console.print(Text(also, style="dim"), soft_wrap=True)


def show_result(console: Console, result: RunResult, as_json: bool) -> None:
    """The result as JSON, as Markdown on a terminal, or as plain text when piped."""
    if as_json:
        print_json(console, result.to_dict())
    elif console.is_terminal:
        print_result(console, result)
    else:
        sys.stdout.write(plain_result(result) + "\n")


def progress_text(line: ProgressLine) -> Text:
    """One step in words, as the scrollback keeps it."""
    mark, style = ("⏳", "dim") if line.phase == "queue" else ("·", "cyan")
    text = Text(f"{mark} ", style=style)
    text.append(terminal_safe(line.text, single_line=True))
    return text


class LiveRun:
    """Shows a streaming run: its steps in words, and the draft under them."""

    def __init__(self, console: Console, question: str = "") -> None:
        self.console = console
        self.language = detect_language(question)
        self.progress = Progress(self.language)
        self.status = say("progress_understanding", self.language)
        self.draft: list[str] = []

    def _view(self) -> RenderableType:
        rows: list[RenderableType] = [Spinner("dots", text=Text(f" {self.status}", style="dim"))]
        if self.draft:
            text = terminal_safe("".join(self.draft))
            tail = "\n".join(text.splitlines()[-DRAFT_LINES:])
            rows.append(Text(tail, style="magenta"))
        return Group(*rows)

    def _said(self, live: Live, lines: list[ProgressLine]) -> None:
        for line in lines:
            live.console.print(progress_text(line))
            self.status = line.text
            if line.phase == "write" and self.draft:
                self.draft = []  # a rewrite streams afresh

    async def run(self, events: AsyncGenerator[RunEvent, None]) -> RunResult:
        result: RunResult | None = None
        with Live(self._view(), console=self.console, refresh_per_second=8, transient=True) as live:
            async for event in with_ticks(events, TICK_SECONDS):
                if event is None:  # a moment without news: say the searches under way
                    self._said(live, self.progress.started())
                    live.update(self._view())
                    continue
                if event.kind == "step" and event.step is not None:
                    self._said(live, self.progress.feed(event.step))
                elif event.kind == "token":
                    self.draft.append(event.text)
                elif event.result is not None:
                    result = event.result
                # Refreshed now, not at the next tick: a token shows as soon as it comes.
                live.update(self._view(), refresh=event.kind == "token")
            self._said(live, self.progress.finish())
        if result is None:
            raise RuntimeError("the run ended without a result")
        return result
