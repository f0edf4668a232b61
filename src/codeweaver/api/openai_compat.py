"""An OpenAI-compatible Chat Completions API (`/v1/chat/completions`, `/v1/models`), so
chat UIs with an OpenAI base URL (Open WebUI, Continue, …) can ask CodeWeaver.

The model picks the mode (`codeweaver`: the pipeline, `codeweaver-librarian`: the
librarian). The question is the last user message, and the messages before it pick the
session it continues (see `openai_sessions`); system messages and sampling options are
ignored, while structured output (`response_format` other than text) and tools, which
CodeWeaver cannot honour, are refused with a 400 naming the parameter. Streams carry
the steps in words as `delta.reasoning_content` while the answer is searched, written and
checked, then the checked answer with its numbered sources as `delta.content`: a client
cannot take back text it has shown, so the draft is never streamed, no reasoning follows
the content, and the streamed content is exactly the reply a request without `stream`
gets. `usage` counts the tokens of every model call the answer made. Tokens, rate limit
and Host/Origin checks are those of `/api/chat`; errors have OpenAI's shape (see
`errors.py`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse

from codeweaver.agent.rules.input_check import InvalidQuestionError, validate_question
from codeweaver.agent.user_text import say
from codeweaver.api.conversations import SessionNotFoundError, StoreUnavailableError
from codeweaver.api.errors import OpenAIError, json_safe
from codeweaver.api.openai_schemas import (
    COMPLETION_RESPONSE,
    MODELS,
    ChatCompletionRequest,
    ChatMessage,
    UnsupportedContentError,
    chunk,
    completion,
    completion_id,
    error_event,
    error_responses,
    message_text,
    model_card,
    now,
    openai_usage,
    refuse_unsupported,
    usage_chunk,
)
from codeweaver.api.openai_sessions import PriorTurn, SessionFinder, prior_turns, seed
from codeweaver.api.queue import QueueFullError, RunTicket
from codeweaver.api.schemas import Service, User, limited
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.memory.sessions import SESSION_ID
from codeweaver.presentation.sources import answer_markdown

logger = logging.getLogger(__name__)

SESSION_HEADER = "X-CodeWeaver-Session"


def no_such_model(model: str) -> OpenAIError:
    message = f"The model `{model}` does not exist; use one of {', '.join(MODELS)}."
    return OpenAIError(404, message, param="model", code="model_not_found")


def _question(messages: list[ChatMessage]) -> tuple[str, list[PriorTurn]]:
    """(the question: the last user message, the turns before it)."""
    users = [n for n, m in enumerate(messages) if m.role == "user"]
    if not users:
        raise OpenAIError(400, "messages must hold a message with role 'user'", param="messages")
    try:
        question = message_text(messages[users[-1]], strict=True)
    except UnsupportedContentError as exc:
        where = f"messages.{users[-1]}.content"
        raise OpenAIError(400, str(exc), param=where, code="unsupported_content") from None
    return question, prior_turns(messages[: users[-1]])


async def admit_chat(
    chat: ChatService,
    finder: SessionFinder,
    body: ChatCompletionRequest,
    user: str,
    header: str | None,
) -> tuple[str, RunTicket, str]:
    """Check the request, then find and claim the session, then take a place in line; a
    derived session is busy from here on (released by the caller when the run ends, or
    here on failure, with a claim made here)."""
    if body.model not in MODELS:
        raise no_such_model(body.model)
    refuse_unsupported(body)
    question, prior = _question(body.messages)
    if header is not None and not SESSION_ID.match(header):
        message = f"{SESSION_HEADER} must be 1-64 letters, digits, '-' or '_'"
        raise OpenAIError(400, message, param=SESSION_HEADER)
    session_id = header
    # Undone if the request is refused: the claim and the derived session given back,
    # the place in line too.
    async with contextlib.AsyncExitStack() as undo:
        try:
            # Before any session is looked up: a bad question is a 400 whoever's the
            # session is, so the answer tells nothing about other users' sessions.
            question = validate_question(question)
            if session_id is None:
                chat.writable()
                session_id, turns, created = await finder.derive(chat, user, question, prior)
                undo.callback(finder.release, session_id)
            else:
                turns, created = [], await chat.claim(session_id, user)
            if created:
                undo.push_async_callback(chat.unclaim, session_id, user)
            ticket = await chat.queue.admit()
            undo.callback(ticket.cancel)
            await seed(chat, session_id, turns, MODELS[body.model], user)
        except InvalidQuestionError as exc:
            raise OpenAIError(400, str(exc), param="messages", code="invalid_question") from None
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {session_id}") from None
        except StoreUnavailableError as exc:
            raise HTTPException(503, str(exc)) from None
        except QueueFullError as exc:
            retry = {"Retry-After": str(exc.retry_after)}
            raise HTTPException(503, str(exc), headers=retry) from None
        undo.pop_all()
    return question, ticket, session_id


def reasoning_lines(event: ServiceEvent) -> str:
    """One line of reasoning for a progress line or a place in line; "" for the rest."""
    if event.kind == "queue":
        return say("progress_waiting", "en", position=event.data.get("position")) + "\n"
    if event.kind == "progress":
        return f"{event.data.get('text', '')}\n"
    return ""


def answer_pieces(text: str) -> list[str]:
    """`text` in paragraph-sized pieces that concatenate back to it exactly."""
    pieces = [part for part in re.split(r"(?<=\n\n)", text) if part]
    return pieces or [text]


async def _chunks(
    events: AsyncGenerator[ServiceEvent, None], body: ChatCompletionRequest
) -> AsyncIterator[dict[str, str]]:
    """The run as `chat.completion.chunk` events, then `[DONE]`."""
    ident, created, model = completion_id(), now(), body.model
    usage = openai_usage({})

    def data(payload: Mapping[str, Any]) -> dict[str, str]:
        return {"data": json.dumps(json_safe(payload), ensure_ascii=False, default=str)}

    yield data(chunk(ident, created, model, {"role": "assistant", "content": ""}))
    # Closed with this generator, so a client that leaves cancels the run.
    async with contextlib.aclosing(events) as run:
        async for event in run:
            if event.kind == "error":
                message = str(event.data.get("message", "the answer failed"))
                yield data(error_event(message, retryable=bool(event.data.get("retryable"))))
                return
            if event.kind == "done":
                for piece in answer_pieces(answer_markdown(event.data)):
                    yield data(chunk(ident, created, model, {"content": piece}))
                usage = openai_usage(event.data)
                break
            if line := reasoning_lines(event):
                yield data(chunk(ident, created, model, {"reasoning_content": line}))
    yield data(chunk(ident, created, model, {}, finish_reason="stop"))
    if body.stream_options is not None and body.stream_options.include_usage:
        yield data(usage_chunk(ident, created, model, usage))
    yield {"data": "[DONE]"}


async def checked_answer(events: AsyncGenerator[ServiceEvent, None]) -> tuple[str, dict[str, int]]:
    """The whole answer and its sources, and its usage, for a request that does not stream."""
    # Closed explicitly, so the slot is given back as soon as the answer is done.
    async with contextlib.aclosing(events) as run:
        async for event in run:
            if event.kind == "done":
                return answer_markdown(event.data), openai_usage(event.data)
            if event.kind == "error":
                message = str(event.data.get("message", "the answer failed"))
                if event.data.get("retryable"):
                    raise HTTPException(503, message, {"Retry-After": "10"})
                raise HTTPException(400, message)
    raise HTTPException(500, "the run ended without an answer")  # pragma: no cover


def openai_router(ping_seconds: float = 15.0) -> APIRouter:
    """The `/v1` routes; `ping_seconds` spaces the keep-alive comments of a stream."""
    router = APIRouter(prefix="/v1", tags=["openai"])
    created = now()
    finder = SessionFinder()

    @router.get("/models", responses=error_responses(401, 421))
    async def list_models(_user: User) -> dict[str, Any]:
        """The models: `codeweaver` (the pipeline) and `codeweaver-librarian`."""
        return {"object": "list", "data": [model_card(m, created) for m in MODELS]}

    @router.get("/models/{model_id}", responses=error_responses(401, 404, 421))
    async def get_model(model_id: str, _user: User) -> dict[str, Any]:
        if model_id not in MODELS:
            raise no_such_model(model_id)
        return model_card(model_id, created)

    @router.post(
        "/chat/completions",
        dependencies=[Depends(limited)],
        response_model=None,
        responses={
            **COMPLETION_RESPONSE,
            **error_responses(400, 401, 403, 404, 413, 421, 429, 503),
        },
    )
    async def create_chat_completion(
        body: ChatCompletionRequest,
        chat: Service,
        user: User,
        session_header: Annotated[str | None, Header(alias=SESSION_HEADER)] = None,
    ) -> JSONResponse | EventSourceResponse:
        """A `chat.completion`, or with `stream: true` its chunks as Server-Sent Events.

        The conversation continues a CodeWeaver session: the `X-CodeWeaver-Session`
        header names it, else it is derived from the messages (see `openai_sessions`);
        the response's `X-CodeWeaver-Session` header says which.
        """
        question, ticket, session_id = await admit_chat(chat, finder, body, user, session_header)
        events = chat.stream(question, ticket, session_id, MODELS[body.model], user)
        if session_header is None:
            events = finder.held(session_id, events)
        headers = {SESSION_HEADER: session_id}
        if body.stream:
            return EventSourceResponse(_chunks(events, body), ping=ping_seconds, headers=headers)
        content, usage = await checked_answer(events)
        reply = completion(completion_id(), now(), body.model, content, usage)
        return JSONResponse(json_safe(reply), headers=headers)

    return router
