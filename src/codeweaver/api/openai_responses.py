"""An OpenAI-compatible Responses API (`POST /v1/responses`) beside Chat Completions, for
clients written against it (the `openai` client's `responses.create`, agents' SDKs, …).

A thin adapter over `openai_compat`: the input becomes Chat Completions messages, which
the same `admit_chat` checks and places in a session and in line, the same service call
answers, and the same auth, per-minute limits and queue guard. The output is a
`reasoning` item whose summary holds the steps in words (the lines Chat Completions
streams as `reasoning_content`), then a `message` whose `output_text` is the checked
answer with its sources (the content Chat Completions gives). A stream sends the summary
while the answer is searched, written and checked, then the answer in
`response.output_text.delta` pieces, then `response.completed`; a failed run ends it
with `response.failed`.

`previous_response_id` continues the session of the response it names when the question
follows it directly: no other turn since, none running in this process, no earlier turns
in `input`. Otherwise — a client going back to an earlier response, two requests
continuing one response at once — the transcript up to that response is read like a Chat
Completions one (see `openai_sessions`), so a new session starts with it and two
conversations never merge.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse

from codeweaver.api.errors import OpenAIError, json_safe
from codeweaver.api.openai_compat import (
    SESSION_HEADER,
    admit_chat,
    answer_pieces,
    checked_answer,
    no_such_model,
    reasoning_lines,
)
from codeweaver.api.openai_responses_schemas import (
    RESPONSE_RESPONSE,
    Frame,
    ResponsesRequest,
    Status,
    input_messages,
    parse_response_id,
    refuse_unsupported,
    response_id,
    summary_part,
    text_part,
)
from codeweaver.api.openai_schemas import (
    MODELS,
    ChatCompletionRequest,
    ChatMessage,
    error_responses,
    openai_usage,
)
from codeweaver.api.openai_sessions import SessionFinder, prior_turns
from codeweaver.api.schemas import Service, User, limited
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.memory.sessions import SESSION_ID
from codeweaver.presentation.sources import answer_markdown


class ResponseSessions(SessionFinder):
    """The `SessionFinder` of `/v1/responses`, which can also take a session by name."""

    async def take(self, session_id: str) -> bool:
        """Mark `session_id` busy unless a run of this process holds it; whether it did.

        Under the finder's lock, so a derivation running meanwhile cannot continue it too.
        """
        async with self._lock:
            if session_id in self._busy:
                return False
            self._busy.add(session_id)
            return True


def _unknown(previous: str) -> OpenAIError:
    # One answer for an id never given, a deleted session and another user's response,
    # so an id tells nobody but its owner anything.
    return OpenAIError(
        400,
        f"Previous response with id {previous[:100]!r} not found.",
        param="previous_response_id",
        code="previous_response_not_found",
    )


async def _resume(
    chat: ChatService, finder: ResponseSessions, previous: str, user: str, *, follows: bool
) -> tuple[str | None, int, list[ChatMessage]]:
    """Where a question after response `previous` goes: (its session, taken, and the
    turns it holds) when the question `follows` that response with no turn since; else
    (None, 0, the transcript up to that response), for a session to be derived from."""
    named = parse_response_id(previous)
    info = None if named is None else await chat.store.index.session(named[0])
    if named is None or info is None or info.owner != user or info.turns < named[1]:
        raise _unknown(previous)
    session_id, turn = named
    if follows and info.turns == turn and await finder.take(session_id):
        return session_id, turn, []
    transcript: list[ChatMessage] = []
    for recorded in (await chat.store.index.turns(session_id))[:turn]:
        transcript.append(ChatMessage(role="user", content=recorded.question))
        transcript.append(ChatMessage(role="assistant", content=recorded.answer))
    return None, 0, transcript


async def _turns_in(chat: ChatService, session_id: str, user: str) -> int:
    """How many turns the caller's session named by the header holds (0 for a new one)."""
    info = await chat.store.index.session(session_id) if SESSION_ID.match(session_id) else None
    return info.turns if info is not None and info.owner == user else 0


def _last_user(messages: list[ChatMessage]) -> int:
    return max(n for n, m in enumerate(messages) if m.role == "user")


async def _place(
    chat: ChatService,
    finder: ResponseSessions,
    body: ResponsesRequest,
    messages: list[ChatMessage],
    user: str,
    header: str | None,
) -> tuple[list[ChatMessage], str | None, int]:
    """(the messages to admit, the session `_resume` took or None, how many turns the
    session will hold before this one)."""
    if body.previous_response_id is not None:
        if header is not None:
            message = f"send previous_response_id or the {SESSION_HEADER} header, not both"
            raise OpenAIError(400, message, param="previous_response_id")
        follows = not prior_turns(messages[: _last_user(messages)])
        taken, before, transcript = await _resume(
            chat, finder, body.previous_response_id, user, follows=follows
        )
        if taken is not None:
            return messages, taken, before
        messages = [*transcript, *messages]
    elif header is not None:
        return messages, None, await _turns_in(chat, header, user)
    # Derived: the session continued, or started, holds the transcript's turns.
    return messages, None, len(prior_turns(messages[: _last_user(messages)]))


async def _noting(
    events: AsyncGenerator[ServiceEvent, None], lines: list[str]
) -> AsyncGenerator[ServiceEvent, None]:
    """`events`, with their reasoning lines appended to `lines` as they pass."""
    async with contextlib.aclosing(events) as run:
        async for event in run:
            if line := reasoning_lines(event):
                lines.append(line)
            yield event


async def _stream(
    events: AsyncGenerator[ServiceEvent, None], frame: Frame
) -> AsyncIterator[dict[str, str]]:
    """The run as Responses stream events, numbered from 0."""
    numbers = itertools.count()

    def sse(kind: str, **fields: Any) -> dict[str, str]:
        payload = {"type": kind, "sequence_number": next(numbers), **fields}
        data = json.dumps(json_safe(payload), ensure_ascii=False, default=str)
        return {"event": kind, "data": data}

    yield sse("response.created", response=frame.response("in_progress"))
    yield sse("response.in_progress", response=frame.response("in_progress"))
    steps: dict[str, Any] = {"item_id": frame.reasoning_id, "output_index": 0, "summary_index": 0}
    reasoning, done, failure = "", None, "the run ended without an answer"
    # Closed with this generator, so a client that leaves cancels the run; left as soon
    # as the answer is done, so its slot is given back before the answer is sent.
    async with contextlib.aclosing(events) as run:
        async for event in run:
            if event.kind in ("done", "error"):
                done = event.data if event.kind == "done" else None
                failure = str(event.data.get("message", "the answer failed"))
                break
            if not (line := reasoning_lines(event)):
                continue
            if not reasoning:
                item = frame.reasoning_item(None, "in_progress")
                yield sse("response.output_item.added", output_index=0, item=item)
                yield sse("response.reasoning_summary_part.added", **steps, part=summary_part(""))
            reasoning += line
            yield sse("response.reasoning_summary_text.delta", **steps, delta=line)
    if reasoning:
        status: Status = "completed" if done is not None else "incomplete"
        yield sse("response.reasoning_summary_text.done", **steps, text=reasoning)
        part = summary_part(reasoning)
        yield sse("response.reasoning_summary_part.done", **steps, part=part)
        item = frame.reasoning_item(reasoning, status)
        yield sse("response.output_item.done", output_index=0, item=item)
    if done is None:
        output = [frame.reasoning_item(reasoning, "incomplete")] if reasoning else []
        yield sse("response.failed", response=frame.response("failed", output, error=failure))
        return
    text, index = answer_markdown(done), 1 if reasoning else 0
    where: dict[str, Any] = {"item_id": frame.message_id, "output_index": index, "content_index": 0}
    item = frame.message_item(None, "in_progress")
    yield sse("response.output_item.added", output_index=index, item=item)
    yield sse("response.content_part.added", **where, part=text_part(""))
    for piece in answer_pieces(text):
        yield sse("response.output_text.delta", **where, delta=piece, logprobs=[])
    yield sse("response.output_text.done", **where, text=text, logprobs=[])
    yield sse("response.content_part.done", **where, part=text_part(text))
    item = frame.message_item(text, "completed")
    yield sse("response.output_item.done", output_index=index, item=item)
    finished = frame.response("completed", frame.output(reasoning, text), openai_usage(done))
    yield sse("response.completed", response=finished)


def responses_router(ping_seconds: float = 15.0) -> APIRouter:
    """`POST /v1/responses`; `ping_seconds` spaces the keep-alive comments of a stream."""
    router = APIRouter(prefix="/v1", tags=["openai"])
    finder = ResponseSessions()

    @router.post(
        "/responses",
        dependencies=[Depends(limited)],
        response_model=None,
        responses={
            **RESPONSE_RESPONSE,
            **error_responses(400, 401, 403, 404, 413, 421, 429, 503),
        },
    )
    async def create_response(
        body: ResponsesRequest,
        chat: Service,
        user: User,
        session_header: Annotated[str | None, Header(alias=SESSION_HEADER)] = None,
    ) -> JSONResponse | EventSourceResponse:
        """A `response`, or with `stream: true` its events as Server-Sent Events.

        The conversation continues a CodeWeaver session: the one `previous_response_id`
        answered in, else the one the `X-CodeWeaver-Session` header names, else one
        derived from the input's messages (see `openai_sessions`); the response's
        `X-CodeWeaver-Session` header says which.
        """
        if body.model not in MODELS:
            raise no_such_model(body.model)
        refuse_unsupported(body)
        messages = input_messages(body)
        if not any(m.role == "user" for m in messages):
            raise OpenAIError(400, "input must hold a message with role 'user'", param="input")
        messages, taken, before = await _place(chat, finder, body, messages, user, session_header)
        try:
            request = ChatCompletionRequest(model=body.model, messages=messages)
            question, ticket, session_id = await admit_chat(
                chat, finder, request, user, taken or session_header
            )
        except BaseException as exc:
            if taken is not None:
                finder.release(taken)
            if isinstance(exc, OpenAIError) and exc.param == "messages":
                exc.param = "input"  # the messages are the input's
            raise
        events = chat.stream(question, ticket, session_id, MODELS[body.model], user)
        if session_header is None:
            events = finder.held(session_id, events)
        frame = Frame(
            id=response_id(session_id, before + 1),
            model=body.model,
            instructions=body.instructions,
            previous_response_id=body.previous_response_id,
            store=body.store is not False,
            metadata=body.metadata or {},
        )
        headers = {SESSION_HEADER: session_id}
        if body.stream:
            return EventSourceResponse(_stream(events, frame), ping=ping_seconds, headers=headers)
        lines: list[str] = []
        text, usage = await checked_answer(_noting(events, lines))
        output = frame.output("".join(lines), text)
        reply = frame.response("completed", output, usage)
        return JSONResponse(json_safe(reply), headers=headers)

    return router
