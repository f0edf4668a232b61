"""OpenAI Chat Completions shapes: the request as OpenAI's clients send it, and the
`chat.completion`, `chat.completion.chunk` and `model` objects they parse.

Field names follow the `openai` package's own types (`openai.types.chat`); nothing is
added except `delta.reasoning_content`, which chat UIs show as the model's thinking.
Parameters CodeWeaver cannot honour (structured output, tools) are refused, as OpenAI
refuses what a model does not support, rather than ignored: a client that relies on them
would otherwise fail later, parsing Markdown as JSON.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codeweaver.agent.rules.input_check import Mode
from codeweaver.api.errors import OpenAIError

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


class ResponseFormat(BaseModel):
    model_config = ConfigDict(extra="allow")  # json_schema

    type: str


class ChatCompletionRequest(BaseModel):
    """OpenAI's `CompletionCreateParams`; sampling options (temperature, max_tokens, …)
    are accepted and ignored: the pipeline chooses its own. See `refuse_unsupported`."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(examples=list(MODELS))
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: Literal[1] | None = None
    response_format: ResponseFormat | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    functions: list[Any] | None = None  # the older spelling of `tools`
    function_call: str | dict[str, Any] | None = None  # … and of `tool_choice`


MARKDOWN_ONLY = "CodeWeaver answers in Markdown text"


def refuse_unsupported(body: ChatCompletionRequest) -> None:
    """OpenAI's 400 naming the parameter, for structured output and tools."""
    kind = body.response_format.type if body.response_format is not None else "text"
    if kind != "text":
        raise OpenAIError(
            400,
            f"Invalid parameter: 'response_format' of type {kind!r} is not supported: "
            f"{MARKDOWN_ONLY}; ask for the format in the message instead.",
            param="response_format",
            code="unsupported_value",
        )
    for param, value in [("tools", body.tools), ("functions", body.functions)]:
        if value:
            raise OpenAIError(
                400,
                f"'{param}' is not supported: {MARKDOWN_ONLY} and calls no tools.",
                param=param,
                code="unsupported_parameter",
            )
    for param, choice in [("tool_choice", body.tool_choice), ("function_call", body.function_call)]:
        if choice is not None and choice != "none":
            raise OpenAIError(
                400,
                f"'{param}' must be 'none' or left out: {MARKDOWN_ONLY} and calls no tools.",
                param=param,
                code="unsupported_value",
            )


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


def openai_usage(done: Mapping[str, Any]) -> dict[str, int]:
    """OpenAI's `usage` from a `done` event's: every model call of the answer summed (one
    answered from the cache counts only the calls it made)."""
    usage = done.get("usage") or {}
    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def completion(
    ident: str, created: int, model: str, content: str, usage: Mapping[str, int]
) -> dict[str, Any]:
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
        "usage": dict(usage),
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


def usage_chunk(ident: str, created: int, model: str, usage: Mapping[str, int]) -> dict[str, Any]:
    """The last chunk when `stream_options.include_usage` asks for it: no choices."""
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": dict(usage),
    }


def model_card(model_id: str, created: int) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": OWNER}


def error_event(message: str, *, retryable: bool) -> dict[str, Any]:
    """What an OpenAI stream sends when it fails after it started."""
    kind = "server_error" if retryable else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
