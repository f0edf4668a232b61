"""`/api/chat` (the checked answer as JSON) and `/api/chat/stream` (the run as
Server-Sent Events)."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from sse_starlette import EventSourceResponse

from codeweaver.agent.rules.input_check import MAX_QUESTION_CHARS, InvalidQuestionError
from codeweaver.api.conversations import SessionNotFoundError, StoreUnavailableError
from codeweaver.api.errors import json_safe
from codeweaver.api.queue import QueueFullError
from codeweaver.api.responses import ChatReply
from codeweaver.api.schemas import CHAT_ERRORS, ChatRequest, Service, User, limited
from codeweaver.api.service import ChatService, ServiceEvent


def chat_router(ping_seconds: float = 15.0) -> APIRouter:
    """The chat routes; `ping_seconds` spaces the keep-alive comments of a stream."""
    router = APIRouter(tags=["chat"], dependencies=[Depends(limited)], responses=CHAT_ERRORS)

    @router.post("/api/chat", response_model=ChatReply)
    async def post_chat(body: ChatRequest, chat: Service, user: User) -> dict[str, Any]:
        """Answer one message; the reply holds the answer, numbered sources and steps."""
        question, ticket = await _admit(chat, body, user)
        # Closed explicitly, so the slot is given back as soon as the answer is done.
        async with contextlib.aclosing(
            chat.stream(question, ticket, body.session_id, body.mode, user)
        ) as events:
            async for event in events:
                if event.kind == "done":
                    return event.data
                if event.kind == "error":
                    if event.data["retryable"]:
                        raise HTTPException(503, event.data["message"], {"Retry-After": "10"})
                    raise HTTPException(422, event.data["message"])
        raise HTTPException(500, "the run ended without an answer")  # pragma: no cover

    @router.post("/api/chat/stream", response_class=EventSourceResponse)
    async def post_chat_stream(body: ChatRequest, chat: Service, user: User) -> EventSourceResponse:
        """Server-Sent Events: `queue`, `think`, `act`, `observe`, `token`, then `done` or
        `error`. Event ids count from 1; a comment line pings every 15 s. Closing the
        connection cancels the run."""
        question, ticket = await _admit(chat, body, user)
        events = chat.stream(question, ticket, body.session_id, body.mode, user)
        return EventSourceResponse(_sse(events), ping=ping_seconds)

    return router


async def _admit(chat: ChatService, body: ChatRequest, user: str) -> tuple[str, Any]:
    """Check the message, then claim the session, then take a place in line (an invalid
    message gets the same answer whoever's session it names)."""
    try:
        return await chat.admit(body.message, body.session_id, user)
    except InvalidQuestionError as exc:
        too_long = len(body.message.strip()) > MAX_QUESTION_CHARS
        raise HTTPException(413 if too_long else 422, str(exc)) from None
    except SessionNotFoundError:
        raise HTTPException(404, f"no session {body.session_id}") from None
    except StoreUnavailableError as exc:
        raise HTTPException(503, str(exc)) from None
    except QueueFullError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None


async def _sse(events: AsyncIterator[ServiceEvent]) -> AsyncIterator[dict[str, str]]:
    numbers = itertools.count(1)
    async for event in events:
        data = json.dumps(json_safe(event.data), ensure_ascii=False, default=str)
        yield {"event": event.kind, "id": str(next(numbers)), "data": data}
