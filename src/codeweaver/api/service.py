"""The service layer shared by the HTTP API, the web page and the Gradio app.

`ChatService.stream` turns one message of a session into events — `queue` while waiting
for a slot, `think` / `act` / `observe` for the steps, `token` for the answer text, then
`done` or `error` — and records the finished turn in the session index. Nothing here
knows about HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from codeweaver.agent.runner import (
    ANSWER_NODES,
    Assistant,
    InvalidQuestionError,
    RunResult,
    validate_question,
)
from codeweaver.api.queue import RunQueue, Ticket
from codeweaver.api.render import render_answer, safe_url
from codeweaver.memory.sessions import SESSION_ID, SessionInfo, ThreadStore, Turn

logger = logging.getLogger(__name__)

EventKind = Literal["queue", "think", "act", "observe", "token", "done", "error"]
STEP_EVENTS = {"think": "think", "act": "act", "observe": "observe", "error": "observe"}


class SessionNotFoundError(KeyError):
    """No session has this id."""


@dataclass(frozen=True)
class ServiceEvent:
    kind: EventKind
    data: dict[str, Any]


def public_sources(sources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Numbered sources as the API shows them: no snippets, only http(s) links."""
    return [
        {
            "n": n,
            "title": str(s.get("title", "")),
            "url": safe_url(str(s.get("url", ""))),
            "source": str(s.get("source", "")),
            "attribution": str(s.get("attribution", "")),
        }
        for n, s in enumerate(sources, 1)
    ]


def new_session_id() -> str:
    return uuid.uuid4().hex


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.match(session_id):
        raise ValueError("session_id must be 1-64 letters, digits, '-' or '_'")
    return session_id


class ChatService:
    def __init__(self, assistant: Assistant, store: ThreadStore, queue: RunQueue) -> None:
        self.assistant = assistant
        self.store = store
        self.queue = queue

    @property
    def deps(self) -> Any:
        return self.assistant.deps

    def reserve(self, message: object) -> tuple[str, Ticket]:
        """Check the message and take a place in line, before any response is sent.

        Raises `InvalidQuestionError` or `QueueFullError`.
        """
        question = validate_question(message)
        return question, self.queue.reserve()

    async def stream(
        self,
        question: str,
        ticket: Ticket,
        session_id: str | None = None,
        mode: str = "pipeline",
    ) -> AsyncGenerator[ServiceEvent, None]:
        """Answer `question` in the session; the ticket comes from `reserve`."""
        session = session_id or new_session_id()
        slot = asyncio.ensure_future(ticket.acquire())
        try:
            async for event in self._wait(ticket, slot):
                yield event
            async for event in self._run(question, session, mode):
                yield event
        except InvalidQuestionError as exc:
            yield ServiceEvent("error", {"message": str(exc), "retryable": False})
        except Exception as exc:
            logger.exception("run failed in session %s", session)
            yield ServiceEvent("error", {"message": f"the answer failed: {exc}", "retryable": True})
        finally:
            # However the stream ends (done, error, client gone), the slot is given back.
            if not slot.done():
                slot.cancel()
                ticket.cancel()
            elif not slot.cancelled() and slot.exception() is None:
                ticket.release()

    async def _wait(
        self, ticket: Ticket, slot: asyncio.Future[None]
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

    async def _run(self, question: str, session: str, mode: str) -> AsyncIterator[ServiceEvent]:
        result: RunResult | None = None
        answering = False
        async for run_event in self.assistant.stream(question, session, mode):
            if run_event.kind == "step" and run_event.step is not None:
                node = str(run_event.step.get("node", "")).rsplit("/", 1)[-1]
                if answering and node in ANSWER_NODES:
                    continue  # the answer's own closing step: `done` carries it
                step = dict(run_event.step)
                kind = STEP_EVENTS.get(str(step.get("kind")), "observe")
                step["error"] = step.get("kind") == "error"
                step["text"] = step.get("message", "")
                yield ServiceEvent(kind, step)  # type: ignore[arg-type]
            elif run_event.kind == "token":
                answering = True
                yield ServiceEvent("token", {"text": run_event.text})
            elif run_event.result is not None:
                result = run_event.result
        if result is None:
            raise RuntimeError("the run ended without an answer")
        turn = await self.store.index.record_turn(
            session,
            question,
            result.answer,
            public_sources(result.sources),
            result.cache_keys,
            mode,
        )
        yield ServiceEvent("done", self._done(turn, result))

    def _done(self, turn: Turn, result: RunResult) -> dict[str, Any]:
        return {
            "session_id": turn.session_id,
            "turn": turn.turn,
            "answer": turn.answer,
            "html": render_answer(turn.answer, len(turn.sources)),
            "sources": turn.sources,
            "plan_case": result.plan_case,
            "question_type": result.question_type,
            "steps": result.steps,
        }

    async def sessions(self, limit: int = 100) -> list[SessionInfo]:
        return await self.store.index.sessions(limit)

    async def history(self, session_id: str) -> tuple[SessionInfo, list[dict[str, Any]]]:
        info = await self.store.index.session(check_session_id(session_id))
        if info is None:
            raise SessionNotFoundError(session_id)
        messages: list[dict[str, Any]] = []
        for turn in await self.store.index.turns(session_id):
            messages.append({"role": "user", "content": turn.question, "turn": turn.turn})
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.answer,
                    "html": render_answer(turn.answer, len(turn.sources)),
                    "sources": turn.sources,
                    "turn": turn.turn,
                    "mode": turn.mode,
                }
            )
        return info, messages

    async def delete(self, session_id: str) -> None:
        if not await self.store.delete(check_session_id(session_id)):
            raise SessionNotFoundError(session_id)

    async def feedback(self, session_id: str, turn_number: int, rating: str) -> bool:
        """Record a rating; a thumbs-down removes the answer from the cache.

        Returns whether a cache entry was removed.
        """
        turns = await self.store.index.turns(check_session_id(session_id))
        turn = next((t for t in turns if t.turn == turn_number), None)
        if turn is None:
            if not turns and await self.store.index.session(session_id) is None:
                raise SessionNotFoundError(session_id)
            raise TurnNotFoundError(turn_number)
        logger.info("feedback %s on %s turn %d", rating, session_id, turn_number)
        if rating != "down":
            return False
        removed = False
        for key in turn.cache_keys:
            removed |= await asyncio.to_thread(self.deps.cache.forget, key)
        return removed


class TurnNotFoundError(KeyError):
    """The session has no turn with this number."""
