"""The words every layer shares: what a source returns, what a question is for, a step.

This module imports nothing from the package, so sources, stores and the graph can all
depend on it without depending on each other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal, NotRequired

# typing_extensions: pydantic (LangGraph Studio's schema pages) rejects typing.TypedDict on 3.11.
from typing_extensions import TypedDict

Intent = Literal["debugging", "learning", "code_review"]
StepKind = Literal["think", "act", "observe", "error"]


class SearchResult(TypedDict):
    """One retrieved document, as every source returns it."""

    title: str
    url: str
    snippet: str
    source: str
    score: float | None
    date: NotRequired[str | None]
    reference: NotRequired[str]
    attribution: NotRequired[str | None]
    # The question a Q&A answer answers (Markdown): context the answer prompt shows beside
    # the closest source, never support for a claim (a question states a problem).
    asked: NotRequired[str]
    summary: NotRequired[str]
    relevance: NotRequired[float]
    # The public API the result documents ("json.loads") and its kind (module, class,
    # function, method or property): such a result is cited where the answer uses it.
    api: NotRequired[str]
    api_kind: NotRequired[str]


class Step(TypedDict):
    """One visible step of a run (drives CLI progress and streamed events).

    `id` is unique within a run: a step streamed when it starts and returned again in
    its node's update is the same step, shown once.
    """

    id: str
    node: str
    kind: StepKind
    message: str
    data: NotRequired[dict[str, Any]]


# Here rather than beside `llm.usage.UsageMeter` (which re-exports it): a run's result
# carries it, and the modules that show a result must not import LangChain.
@dataclass(frozen=True)
class Usage:
    """Totals of a span of model calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.calls - other.calls,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
        }


def step(node: str, kind: StepKind, message: str, **data: Any) -> Step:
    """A new step with a fresh id."""
    item: Step = {"id": uuid.uuid4().hex[:16], "node": node, "kind": kind, "message": message}
    if data:
        item["data"] = data
    return item


__all__ = ["Intent", "SearchResult", "Step", "StepKind", "Usage", "step"]
