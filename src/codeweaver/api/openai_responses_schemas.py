"""OpenAI Responses API shapes: the `POST /v1/responses` request as OpenAI's clients send
it, and the `response` object, its output items and its stream events they parse.

Field names follow the `openai` package's own types (`openai.types.responses`). The input
becomes Chat Completions messages, so both doors share one way of reading a conversation;
what CodeWeaver cannot honour (tools, structured output, images and files, background
runs, stored conversations) is refused with a 400 naming the parameter, as
`openai_schemas.refuse_unsupported` does for Chat Completions.

A response id names the session and turn it answered (`resp_<nonce>_<turn>_<session>`),
so `previous_response_id` finds its session in the shared session index: any replica
can continue it, also after a restart, and nothing is kept in memory per response.
Knowing an id grants nothing: the session must be the caller's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from codeweaver.api.errors import OpenAIError
from codeweaver.api.openai_schemas import MARKDOWN_ONLY, MODELS, ChatMessage, ContentPart, now
from codeweaver.memory.sessions import SESSION_ID

# Text parts of an input message; a client that sends its earlier `response.output`
# back as input sends the answers as `output_text`.
_TEXT_PARTS = {"input_text", "output_text"}
# `resp_<nonce>_<turn>_<session>`: the session id last, as it may hold `_`.
_ID = re.compile(rf"^resp_([0-9a-f]{{24}})_([1-9][0-9]{{0,8}})_({SESSION_ID.pattern[1:-1]})$")


class InputPart(BaseModel):
    """One part of an input message's content; only text parts can be answered."""

    model_config = ConfigDict(extra="allow")  # image_url, file_id, file_data, annotations

    type: str
    text: str | None = None


class InputItem(BaseModel):
    """An input item: a message (the `type` may be left out), or a reasoning item a
    client sends back with the earlier output, which adds nothing to the question."""

    model_config = ConfigDict(extra="allow")  # id, status, summary, …

    type: str = "message"
    role: Literal["user", "assistant", "system", "developer"] | None = None
    content: str | list[InputPart] | None = None


class TextFormat(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, schema, strict

    type: str


class TextConfig(BaseModel):
    model_config = ConfigDict(extra="allow")  # verbosity

    format: TextFormat | None = None


MetadataKey = Annotated[str, StringConstraints(max_length=64)]
MetadataValue = Annotated[str, StringConstraints(max_length=512)]


def _string_or_items(schema: dict[str, Any]) -> None:
    # Read as a list (see `_one_message`), but documented as OpenAI's clients send it.
    schema["anyOf"] = [
        {"type": "string"},
        {"type": schema.pop("type"), "items": schema.pop("items")},
    ]


class ResponsesRequest(BaseModel):
    """OpenAI's `ResponseCreateParams`; sampling options (temperature, max_output_tokens,
    reasoning, …) are accepted and ignored, and so are `instructions` and system or
    developer messages, as in Chat Completions. See `refuse_unsupported`."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(examples=list(MODELS))
    input: list[InputItem] = Field(
        description="A string, or a list of input items.", json_schema_extra=_string_or_items
    )
    instructions: str | None = None
    stream: bool | None = False
    previous_response_id: str | None = None
    store: bool | None = True
    metadata: dict[MetadataKey, MetadataValue] | None = Field(default=None, max_length=16)
    text: TextConfig | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    background: bool | None = None
    conversation: str | dict[str, Any] | None = None

    @field_validator("input", mode="before")
    @classmethod
    def _one_message(cls, value: object) -> object:
        # A string is one user message: read as a list, a bad item is named by its index.
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        if not isinstance(value, list):
            raise ValueError("input must be a string or a list of input items")
        return value


def refuse_unsupported(body: ResponsesRequest) -> None:
    """OpenAI's 400 naming the parameter, for what CodeWeaver cannot honour."""
    kind = body.text.format.type if body.text and body.text.format else "text"
    if kind != "text":
        raise OpenAIError(
            400,
            f"Invalid parameter: 'text.format' of type {kind!r} is not supported: "
            f"{MARKDOWN_ONLY}; ask for the format in the input instead.",
            param="text.format",
            code="unsupported_value",
        )
    if body.tools:
        message = f"'tools' is not supported: {MARKDOWN_ONLY} and calls no tools."
        raise OpenAIError(400, message, param="tools", code="unsupported_parameter")
    if body.tool_choice is not None and body.tool_choice != "none":
        message = f"'tool_choice' must be 'none' or left out: {MARKDOWN_ONLY} and calls no tools."
        raise OpenAIError(400, message, param="tool_choice", code="unsupported_value")
    if body.background:
        message = "'background' is not supported: a response is answered while you wait."
        raise OpenAIError(400, message, param="background", code="unsupported_parameter")
    if body.conversation is not None:
        message = "'conversation' is not supported: continue with 'previous_response_id'."
        raise OpenAIError(400, message, param="conversation", code="unsupported_parameter")


def input_messages(body: ResponsesRequest) -> list[ChatMessage]:
    """The input as Chat Completions messages; 400 naming the item or part at fault."""
    messages: list[ChatMessage] = []
    for n, item in enumerate(body.input):
        if item.type == "reasoning":
            continue
        if item.type != "message":
            raise OpenAIError(
                400,
                f"input items of type {item.type!r} are not supported: send messages "
                "with a role and text content",
                param=f"input.{n}.type",
                code="unsupported_value",
            )
        if item.role is None:
            message = "a message needs a role: 'user', 'assistant', 'system' or 'developer'"
            raise OpenAIError(400, message, param=f"input.{n}.role")
        if isinstance(item.content, list):
            for part in item.content:
                if part.type not in _TEXT_PARTS:
                    raise OpenAIError(
                        400,
                        f"content parts of type {part.type!r} are not supported: CodeWeaver "
                        "answers text only; send the question as text",
                        param=f"input.{n}.content",
                        code="unsupported_content",
                    )
        content: str | list[ContentPart] | None = (
            [ContentPart(type="text", text=part.text or "") for part in item.content]
            if isinstance(item.content, list)
            else item.content
        )
        messages.append(ChatMessage(role=item.role, content=content))
    return messages


def response_id(session_id: str, turn: int) -> str:
    """The id of the response that answers turn `turn` (from 1) of `session_id`."""
    return f"resp_{uuid.uuid4().hex[:24]}_{turn}_{session_id}"


def parse_response_id(text: str) -> tuple[str, int] | None:
    """(the session, the turn) a response id names; None for a text no id of ours is."""
    found = _ID.match(text)
    return None if found is None else (found.group(3), int(found.group(2)))


def response_usage(usage: Mapping[str, int]) -> dict[str, Any]:
    """The Responses `usage` from Chat Completions' (`openai_schemas.openai_usage`)."""
    return {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage["completion_tokens"],
        # The steps in words are no model's reasoning tokens: every call is counted above.
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["total_tokens"],
    }


Status = Literal["in_progress", "completed", "incomplete"]


def summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


@dataclass(frozen=True)
class Frame:
    """What one response says whatever its state: its ids, and the request's echoes."""

    id: str
    model: str
    instructions: str | None
    previous_response_id: str | None
    store: bool
    metadata: Mapping[str, str]
    created_at: int = field(default_factory=now)
    reasoning_id: str = field(default_factory=lambda: f"rs_{uuid.uuid4().hex}")
    message_id: str = field(default_factory=lambda: f"msg_{uuid.uuid4().hex}")

    def reasoning_item(self, summary: str | None, status: Status) -> dict[str, Any]:
        """The steps in words as one summary part (none yet while `summary` is None)."""
        parts = [] if summary is None else [summary_part(summary)]
        return {"id": self.reasoning_id, "type": "reasoning", "summary": parts, "status": status}

    def message_item(self, text: str | None, status: Status) -> dict[str, Any]:
        """The answer as one `output_text` part (none yet while `text` is None)."""
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "status": status,
            "content": [] if text is None else [text_part(text)],
        }

    def output(self, reasoning: str, text: str) -> list[dict[str, Any]]:
        """A finished response's items: the steps (when there were any), then the answer."""
        steps = [self.reasoning_item(reasoning, "completed")] if reasoning else []
        return [*steps, self.message_item(text, "completed")]

    def response(
        self,
        status: Literal["in_progress", "completed", "failed"],
        output: Sequence[Mapping[str, Any]] = (),
        usage: Mapping[str, int] | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """The `response` object in `status`; `usage` in Chat Completions' form."""
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "completed_at": now() if status == "completed" else None,
            "error": None if error is None else {"code": "server_error", "message": error},
            "incomplete_details": None,
            "instructions": self.instructions,
            "metadata": dict(self.metadata),
            "model": self.model,
            "output": [dict(item) for item in output],
            "parallel_tool_calls": False,
            "previous_response_id": self.previous_response_id,
            "store": self.store,
            "temperature": None,
            "text": {"format": {"type": "text"}},
            "tool_choice": "none",
            "tools": [],
            "top_p": None,
            "truncation": "disabled",
            "usage": None if usage is None else response_usage(usage),
        }


# A response as JSON, or its events as Server-Sent Events with `stream: true`.
RESPONSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A `response`, or its stream events from `response.created` to "
        "`response.completed` (or `response.failed`).",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
}
