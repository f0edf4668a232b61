"""Response bodies of the native API (`/api/...`), field for field what the routes return.

A field typed `X | SkipJsonSchema[None] = None` is absent rather than null when it has no
value: the health route serialises without unset fields, so it never sends such a null.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema


class SourceItem(BaseModel):
    """One numbered source (`presentation.sources.SourceView`)."""

    n: int
    title: str
    url: str = Field(description="An http(s) link, or empty.")
    source: str = Field(description="The source's name.")
    label: str = Field(description="What people call the source.")
    attribution: str
    reference: str
    cited: bool = Field(description="Whether the answer cites it.")


class ProgressItem(BaseModel):
    phase: str = Field(description="What kind of line (`search`, `found`, `check`, …).")
    text: str


class UsageTotals(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    calls: int


class ChatReply(BaseModel):
    """The checked answer of one turn, as the stream's `done` event carries it."""

    language: str
    session_id: str
    turn: int
    answer: str
    html: str = Field(description="The answer rendered, citations linked to their sources.")
    sources: list[SourceItem]
    plan_case: str | None
    question_type: str | None
    code_findings: list[dict[str, Any]]
    progress: list[ProgressItem]
    steps: list[dict[str, Any]]
    usage: UsageTotals


class SessionSummary(BaseModel):
    id: str
    title: str
    messages: int = Field(description="Questions and answers in it.")
    created: float
    updated: float


class UserMessage(BaseModel):
    role: Literal["user"]
    content: str
    turn: int


class AssistantMessage(BaseModel):
    role: Literal["assistant"]
    content: str
    html: str
    sources: list[SourceItem]
    turn: int
    mode: str


HistoryMessage = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]


class SessionDetail(SessionSummary):
    history: list[HistoryMessage]


class FeedbackReply(BaseModel):
    ok: bool
    cache_removed: bool = Field(description="Whether a cached answer was removed.")


class StoresState(BaseModel):
    threads: str
    cache: str
    vectors: str


class ModelServerState(BaseModel):
    url: str
    reachable: bool
    models: list[str]
    concurrency: int | None
    error: str | None


class DependencyState(BaseModel):
    name: str
    reachable: bool
    error: str | None


class QueueState(BaseModel):
    running: int
    waiting: int
    concurrency: int
    max_waiting: int
    shared: bool | SkipJsonSchema[None] = Field(
        default=None, description="Present when the queue is shared through Redis."
    )


class HealthReport(BaseModel):
    """Only `status` without a valid token (when tokens are configured); `model_server`
    only when the model is behind a server, `dependencies` once they were checked."""

    status: Literal["ok", "degraded", "starting"]
    version: str | SkipJsonSchema[None] = None
    model: str | SkipJsonSchema[None] = None
    provider: str | SkipJsonSchema[None] = None
    sources: dict[str, str] | SkipJsonSchema[None] = None
    stores: StoresState | SkipJsonSchema[None] = None
    checked: float | SkipJsonSchema[None] = None
    model_server: ModelServerState | SkipJsonSchema[None] = None
    dependencies: dict[str, DependencyState] | SkipJsonSchema[None] = None
    problems: list[str] | SkipJsonSchema[None] = None
    starting: str | None = Field(
        default=None, description="What the service is doing while it starts; null once ready."
    )
    building: dict[str, str] | SkipJsonSchema[None] = None
    queue: QueueState | SkipJsonSchema[None] = None
