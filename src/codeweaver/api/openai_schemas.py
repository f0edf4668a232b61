"""OpenAI Chat Completions shapes: the request as OpenAI's clients send it, and the
`chat.completion`, `chat.completion.chunk` and `model` objects they parse.

Field names follow the `openai` package's own types (`openai.types.chat`); nothing is
added except `delta.reasoning_content`, which chat UIs show as the model's thinking.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codeweaver.agent.input_check import Mode

# Model id -> CodeWeaver mode.
MODELS: dict[str, Mode] = {"codeweaver": "pipeline", "codeweaver-librarian": "librarian"}
OWNER = "codeweaver"
_TEXT_PARTS = {"text"}


class ContentPart(BaseModel):
    """One part of a message's content; only `text` parts can be answered."""

    model_config = ConfigDict(extra="allow")  # image_url, input_audio, file, refusal

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    # name, tool_calls, refusal, … are accepted and not used.
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool | None = None


class ChatCompletionRequest(BaseModel):
    """OpenAI's `CompletionCreateParams`; sampling options (temperature, max_tokens, …)
    are accepted and ignored: the pipeline chooses its own."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(examples=list(MODELS))
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: Literal[1] | None = None


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorBody(BaseModel):
    error: OpenAIErrorDetail


_ERRORS = {
    400: "The request is not valid (`param` names the field).",
    401: "A token is required and was missing or wrong.",
    403: "Sent by a web page of another origin.",
    404: "No such model, or the named session is another user's.",
    413: "The body is too long.",
    421: "The Host header names a host this server does not answer for.",
    429: "Over the per-minute budget; `Retry-After` says when to try again.",
    503: "Busy, or the conversation store cannot be used; the message says which.",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the errors a `/v1` route can answer, in OpenAI's shape."""
    return {code: {"model": OpenAIErrorBody, "description": _ERRORS[code]} for code in codes}


# A completion as JSON, or its chunks as Server-Sent Events with `stream: true`.
COMPLETION_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A `chat.completion`, or `chat.completion.chunk` events then `[DONE]`.",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
}


class UnsupportedContentError(ValueError):
    """A message part that is not text (an image, audio, a file)."""


def message_text(message: ChatMessage, *, strict: bool = False) -> str:
    """The message's text; with `strict`, a part that is not text raises."""
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if part.type in _TEXT_PARTS:
            texts.append(part.text or "")
        elif strict:
            raise UnsupportedContentError(
                f"content parts of type {part.type!r} are not supported: CodeWeaver answers "
                "text only; send the question as text"
            )
    return "\n".join(texts)


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def now() -> int:
    return int(time.time())


# Not counted: the pipeline makes several model calls per answer, and the service does
# not report their tokens; OpenAI's schema requires the object, so it holds zeros.
ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def completion(ident: str, created: int, model: str, content: str) -> dict[str, Any]:
    """A `chat.completion` with one choice."""
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": dict(ZERO_USAGE),
    }


def chunk(
    ident: str,
    created: int,
    model: str,
    delta: Mapping[str, Any],
    finish_reason: Literal["stop"] | None = None,
) -> dict[str, Any]:
    """A `chat.completion.chunk` with one choice."""
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [
            {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish_reason}
        ],
    }


def usage_chunk(ident: str, created: int, model: str) -> dict[str, Any]:
    """The last chunk when `stream_options.include_usage` asks for it: no choices."""
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": dict(ZERO_USAGE),
    }


def model_card(model_id: str, created: int) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": OWNER}


def error_event(message: str, *, retryable: bool) -> dict[str, Any]:
    """What an OpenAI stream sends when it fails after it started."""
    kind = "server_error" if retryable else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
