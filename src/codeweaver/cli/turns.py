"""A question of `ask` or `chat` as a turn of the service that `codeweaver serve` runs: it
is recorded in the same session index, as the local user's (the user a server without
tokens serves), so the API lists the CLI's conversations and either door continues them.
The terminal shows the run as before: its steps in words and the draft live, or nothing
until the answer when output is piped; a wait for the conversation or a slot is said.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING

from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.agent.user_text import say
from codeweaver.api.conversations import (
    ConversationBusyError,
    SessionNotFoundError,
    StoreUnavailableError,
)
from codeweaver.api.queue import QueueFullError
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.api.startup import open_service
from codeweaver.cli.live import LiveRun, progress_text
from codeweaver.memory.sessions import DEFAULT_OWNER, SessionOwnerError
from codeweaver.presentation.progress import ProgressLine
from codeweaver.words.language import detect_language

if TYPE_CHECKING:
    from rich.console import Console

    from codeweaver.agent.deps import Deps
    from codeweaver.api.queue import RunTicket

# Who asks from the command line: the user a server without tokens serves, whose
# sessions `codeweaver serve` lists on the same data folder.
LOCAL_USER = DEFAULT_OWNER
# Why the service may refuse a turn; the message is the whole story for the user.
REFUSALS = (
    SessionNotFoundError,
    SessionOwnerError,
    StoreUnavailableError,
    ConversationBusyError,
    QueueFullError,
)


def refusal(exc: Exception, thread: str | None) -> str:
    """What to tell the user the service refused (one of `REFUSALS`)."""
    if isinstance(exc, SessionNotFoundError | SessionOwnerError):
        return f"the conversation {thread} is another user's (started on the server)"
    return str(exc)


@asynccontextmanager
async def open_chat(deps: Deps) -> AsyncIterator[ChatService]:
    """The service on the dependencies the command built, its sources prepared already
    (with the command's progress), so nothing is prepared again in the background."""
    async with open_service(deps.settings, deps=deps, prepared=True) as running:
        yield await running.service()


async def run_turn(
    chat: ChatService,
    question: str,
    ticket: RunTicket,
    thread: str | None,
    mode: str,
    console: Console,
    live: bool,
) -> RunResult:
    """Answer `question` in `thread` (a new conversation when None) with the place in
    line `ticket`; `live`: the steps and the draft shown on `console` as they come."""
    language = detect_language(question)
    turn = chat.turn(question, ticket, thread, mode, LOCAL_USER)
    events = _said_waits(turn, console, language)
    if live:
        return await LiveRun(console, question).run(events)
    result: RunResult | None = None
    async with aclosing(events) as stream:
        async for event in stream:
            if event.result is not None:
                result = event.result
    if result is None:
        raise RuntimeError("the run ended without a result")
    return result


async def _said_waits(
    turn: AsyncGenerator[RunEvent | ServiceEvent, None], console: Console, language: str
) -> AsyncGenerator[RunEvent, None]:
    """The run's events; each wait before it (for the conversation, for a slot) said on
    `console` as one line, so no wait is silent."""
    async with aclosing(turn) as items:
        async for item in items:
            if isinstance(item, RunEvent):
                yield item
            elif item.kind == "queue":
                text = say("progress_waiting", language, position=item.data["position"])
                console.print(progress_text(ProgressLine("queue", text)))
            elif item.kind == "progress":
                line = ProgressLine(str(item.data["phase"]), str(item.data["text"]))
                console.print(progress_text(line))
