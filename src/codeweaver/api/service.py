"""The service layer every door goes through: the HTTP API and its web page, MCP, the
Gradio app and the CLI.

`ChatService.stream` turns one message of a session into events — `queue` while waiting
for a slot, `think` / `act` / `observe` for the steps, `progress` for the steps in words
(a dozen lines at most), `token` for the draft's text, then `done` (the checked answer,
its numbered sources and its progress lines) or `error` — and records the finished turn
in the session index. `ChatService.turn` runs the same turn for a door that shows the
run itself (the CLI). Nothing here knows about HTTP.

Every door admits a message in one order (`admit`): the message is checked first, so a
bad one gets the same refusal whichever session it names; then the session is claimed
for its owner, before any turn runs in it; then a place in line is taken. A turn of a
conversation waits while another turn of it runs (see `ThreadLocks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.agent.rules.input_check import InvalidQuestionError, validate_question
from codeweaver.agent.runner import Assistant
from codeweaver.agent.user_text import say
from codeweaver.api.conversations import (
    ConversationBusyError,
    Conversations,
    SessionNotFoundError,
    StoreUnavailableError,
    check_session_id,
    new_session_id,
    public_sources,
)
from codeweaver.api.queue import RunLine, RunTicket
from codeweaver.api.service_events import RunView, TurnItem
from codeweaver.api.service_events import ServiceEvent as ServiceEvent
from codeweaver.memory.sessions import DEFAULT_OWNER, SessionOwnerError, ThreadStore
from codeweaver.presentation.ticks import with_ticks
from codeweaver.words.language import detect_language

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0
# How often a run without news is looked at (to say the searches that have started).
TICK_SECONDS = 0.5
# Exception text can hold SQL or file paths: clients get this, the log gets the rest.
RUN_FAILED = "the answer failed because of an internal error; try again"
# How long a turn waits for the turn before it in the same conversation (a local model
# writes an answer in a minute or two; a turn stuck behind several is refused).
TURN_WAIT_SECONDS = 300.0


class ChatService(Conversations):
    def __init__(
        self,
        assistant: Assistant,
        store: ThreadStore,
        queue: RunLine,
        store_problem: str | None = None,
    ) -> None:
        self.assistant = assistant
        self.store = store
        self.queue = queue
        # Why the conversation store cannot take writes (found at start), if it cannot.
        self.store_problem = store_problem
        # Which sources are still being built and how far (set by the service's startup).
        self.building: Callable[[], dict[str, str]] = lambda: {}
        # How long a run may go without news before a progress line says it is still
        # writing (a local model writes for a minute; doors that show no draft need it).
        self.heartbeat_seconds = HEARTBEAT_SECONDS
        self.turn_wait_seconds = TURN_WAIT_SECONDS

    async def claim(self, session_id: str | None, owner: str = DEFAULT_OWNER) -> bool:
        """Make `session_id` `owner`'s before a turn runs in it; whether this created it.

        `SessionNotFoundError` when it is another user's: its row was created by its
        owner's first request, so nobody can run a turn into it, even while that first
        turn is still being answered. None names no session (`stream` claims a new id).
        """
        self.writable()
        if session_id is None:
            return False
        claim = await self.store.index.claim(check_session_id(session_id), owner)
        if claim == "new" and owner != DEFAULT_OWNER and await self._unindexed(session_id):
            # A thread the index never recorded (the Python API's, or an earlier CLI's,
            # in the same data directory) is the local user's: nobody else continues its
            # memory.
            await self.unclaim(session_id, owner)
            claim = "foreign"
        if claim == "foreign":
            raise SessionNotFoundError(session_id)
        return claim == "new"

    async def unclaim(self, session_id: str, owner: str) -> None:
        """Give back a claim no turn was recorded in (its request was refused); best
        effort, and shielded so a cancelled request still gives it back."""
        try:
            await asyncio.shield(self.store.index.release(session_id, owner))
        except Exception:
            logger.warning("could not give back the claim of session %s", session_id)

    async def _unindexed(self, session_id: str) -> bool:
        config: RunnableConfig = {"configurable": {"thread_id": session_id, "checkpoint_ns": ""}}
        return await self.store.checkpointer.aget_tuple(config) is not None

    async def admit(
        self, message: object, session_id: str | None, owner: str = DEFAULT_OWNER
    ) -> tuple[str, RunTicket]:
        """Check the message, claim the session, take a place in line: in this order, so
        an invalid message is refused alike whether the session is free, yours or not.

        Raises `InvalidQuestionError`, `SessionNotFoundError`, `StoreUnavailableError`
        or `QueueFullError` (then a session this claimed is given back).
        """
        question = validate_question(message)
        return question, await self.enter(session_id, owner)

    async def enter(self, session_id: str | None, owner: str = DEFAULT_OWNER) -> RunTicket:
        """`admit` for a message its door has checked already (the CLI, before anything
        loads): claim the session, then take a place in line."""
        created = await self.claim(session_id, owner)
        try:
            return await self.queue.admit()
        except BaseException:
            if created and session_id is not None:
                await self.unclaim(session_id, owner)
            raise

    @property
    def deps(self) -> Any:
        return self.assistant.deps

    async def reserve(self, message: object) -> tuple[str, RunTicket]:
        """Check the message and take a place in line, before any response is sent; the
        session is claimed before this (`admit` does both).

        Raises `InvalidQuestionError` or `QueueFullError`.
        """
        question = validate_question(message)
        return question, await self.queue.admit()

    async def stream(
        self,
        question: str,
        ticket: RunTicket,
        session_id: str | None = None,
        mode: str = "pipeline",
        owner: str = DEFAULT_OWNER,
    ) -> AsyncGenerator[ServiceEvent, None]:
        """Answer `question` in `owner`'s session (a new one when None); the ticket
        comes from `admit`. The turn waits for its conversation (no other turn of it
        running, in any server) before it waits for a slot, so a waiting turn holds no
        slot another user's answer could use."""
        session = session_id or new_session_id()
        view = RunView(question, self.heartbeat_seconds)
        try:
            turn = self._turn(question, ticket, session, mode, owner)
            async with contextlib.aclosing(turn) as items:
                async for item in items:
                    for event in view.events(item):
                        yield event
        except InvalidQuestionError as exc:
            yield ServiceEvent("error", {"message": str(exc), "retryable": False})
        except (SessionOwnerError, SessionNotFoundError):
            message = f"no session {session}"
            yield ServiceEvent("error", {"message": message, "retryable": False})
        except (ConversationBusyError, StoreUnavailableError) as exc:
            retryable = isinstance(exc, ConversationBusyError)
            yield ServiceEvent("error", {"message": str(exc), "retryable": retryable})
        except Exception:
            logger.exception("run failed in session %s", session)
            yield ServiceEvent("error", {"message": RUN_FAILED, "retryable": True})

    async def turn(
        self,
        question: str,
        ticket: RunTicket,
        session_id: str | None = None,
        mode: str = "pipeline",
        owner: str = DEFAULT_OWNER,
    ) -> AsyncGenerator[RunEvent | ServiceEvent, None]:
        """`stream`'s turn for a door that shows the run itself (the CLI): the waits
        before it (`progress`, `queue`), then the assistant's own events, the result last,
        once the turn is recorded. Errors are raised, not yielded."""
        session = session_id or new_session_id()
        turn = self._turn(question, ticket, session, mode, owner)
        async with contextlib.aclosing(turn) as items:
            async for item in items:
                if isinstance(item, RunEvent | ServiceEvent):
                    yield item

    async def _turn(
        self,
        question: str,
        ticket: RunTicket,
        session: str,
        mode: str,
        owner: str,
    ) -> AsyncGenerator[TurnItem, None]:
        """One turn of `session`, as every door runs it: wait for the conversation, claim
        it, wait for a slot, run (a tick when it starts and whenever a moment passes
        without news), record; the result, then the recorded turn, come last."""
        slot: asyncio.Future[None] | None = None
        answered = False
        waiting = asyncio.Event()  # set if the turn must wait for another one

        def give_back() -> None:
            # However the turn ends (done, error, client gone), the slot is given back.
            if slot is None:
                ticket.cancel()
            elif not slot.done():
                slot.cancel()
                ticket.cancel()
            elif not slot.cancelled() and slot.exception() is None:
                ticket.release()

        async def end_turn() -> None:
            # While the conversation is still this turn's, and to the end even if the
            # request is cancelled: an unanswered first turn gives its session back, and
            # then the slot is given back, so a retry once the slot is free finds it free.
            try:
                if not answered:
                    await self._forget_if_empty(session, owner)
            finally:
                give_back()

        try:
            async with contextlib.AsyncExitStack() as turn:
                hold = self.store.locks.hold(session, waiting.set, end_turn)
                async for event in self._take_turn(turn, hold, waiting, question):
                    yield event
                # Claimed by the door already; claimed again now that no other turn of it
                # runs: a new id is claimed before it runs, a session the turn before gave
                # back (its first, unanswered) is claimed afresh, and one another user took
                # meanwhile is refused. No caller runs a turn in a session not its owner's.
                await self.claim(session, owner)
                slot = asyncio.ensure_future(ticket.acquire())
                async for event in self._wait(ticket, slot):
                    yield event
                yield None  # the run starts
                result: RunResult | None = None
                async for item in self._run(question, session, mode):
                    if isinstance(item, RunEvent) and item.result is not None:
                        result = item.result  # given once the turn is recorded
                    else:
                        yield item
                if result is None:
                    raise RuntimeError("the run ended without an answer")
                recorded = await self.store.index.record_turn(
                    session,
                    question,
                    result.answer,
                    public_sources(result.answer, result.sources, detect_language(question)),
                    result.cache_keys,
                    mode,
                    owner,
                )
                answered = True
                yield RunEvent("result", result=result)
                yield recorded
        finally:
            if slot is None:  # the conversation never became this turn's: no `end_turn`
                ticket.cancel()

    def _run(self, question: str, session: str, mode: str) -> AsyncIterator[RunEvent | None]:
        """The assistant's run of the turn, with None whenever a moment passes without
        news."""
        return with_ticks(self.assistant.stream_checked(question, session, mode), TICK_SECONDS)

    async def _forget_if_empty(self, session: str, owner: str) -> None:
        """Give back a session whose first turn ended unanswered (failed, cancelled):
        its thread, then its claim, so the chat's retry can have the same id and nothing
        of the attempt is left for whoever claims it next. Run before the conversation is
        let go, to the end even if the request is cancelled (see `ThreadLocks.hold`)."""
        info = await self.store.index.session(session)
        if info is None or info.owner != owner or info.turns:
            return
        await self.store.checkpointer.adelete_thread(session)
        await self.store.index.release(session, owner)

    async def _take_turn(
        self,
        turn: contextlib.AsyncExitStack,
        hold: contextlib.AbstractAsyncContextManager[None],
        waiting: asyncio.Event,
        question: str,
    ) -> AsyncIterator[ServiceEvent]:
        """Enter `hold` (the conversation, free of other turns), saying so if `waiting`
        is set meanwhile; the conversation is this turn's until `turn` closes.
        `ConversationBusyError` once `turn_wait_seconds` have passed."""
        entering = asyncio.ensure_future(turn.enter_async_context(hold))
        said = asyncio.ensure_future(waiting.wait())
        deadline = time.monotonic() + self.turn_wait_seconds
        try:
            await asyncio.wait(
                {entering, said}, timeout=self.turn_wait_seconds, return_when="FIRST_COMPLETED"
            )
            if said.done() and not entering.done():
                language = detect_language(question)
                text = say("progress_waiting_for_turn", language)
                yield ServiceEvent("progress", {"phase": "queue", "text": text})
                await asyncio.wait({entering}, timeout=max(0.0, deadline - time.monotonic()))
            if not entering.done():
                raise ConversationBusyError(
                    "another answer in this conversation is still being written; "
                    "try again once it is done"
                )
            entering.result()
        finally:
            said.cancel()
            if not entering.done():
                entering.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await entering

    async def _wait(
        self, ticket: RunTicket, slot: asyncio.Future[None]
    ) -> AsyncIterator[ServiceEvent]:
        """Report the place in line until the slot is ours."""
        reported: int | None = None
        while True:
            done, _ = await asyncio.wait({slot}, timeout=0.01 if reported is None else 1.0)
            if done:
                slot.result()
                return
            if ticket.position != reported:
                reported = ticket.position
                yield ServiceEvent("queue", {"position": reported + 1})
