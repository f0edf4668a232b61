"""Structured output that survives what small models really emit.

Every node that needs a decision from the model goes through `ainvoke_structured`: it
asks for JSON, extracts it from code fences or surrounding prose, repairs single quotes
and trailing commas, validates it against a Pydantic schema and, when all of that fails,
returns a deterministic default together with the reason, so the run goes on and the
steps say why.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from json_repair import repair_json
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A validated value, and why the default was used when it was."""

    value: T
    raw: str
    fallback_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.fallback_reason is None


@runtime_checkable
class SchemaConstrained(Protocol):
    """A model that can restrict its decoding to JSON valid under a schema."""

    def schema_kwargs(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Extra call arguments that constrain the reply to `schema`."""


class StructuredOutputError(ValueError):
    """The text holds no JSON object that fits the schema."""


def _candidates(text: str) -> list[str]:
    """Plausible JSON snippets in `text`, most specific first."""
    found = [m.group(1).strip() for m in _FENCE.finditer(text)]
    start = text.find("{")
    if start != -1:
        end = text.rfind("}")
        found.append(text[start : end + 1] if end > start else text[start:])
    found.append(text.strip())
    return [c for c in found if c]


def _load(snippet: str) -> Any:
    try:
        return json.loads(snippet)
    except json.JSONDecodeError:
        repaired = repair_json(snippet, return_objects=True)
        return repaired


def parse_structured(text: str, schema: type[T]) -> T:
    """Parse model output into `schema`, or raise `StructuredOutputError` saying why."""
    if not text or not text.strip():
        raise StructuredOutputError("the model returned nothing")
    errors: list[str] = []
    for snippet in _candidates(text):
        data = _load(snippet)
        if not isinstance(data, dict) or not data:
            errors.append("no JSON object")
            continue
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "object"
            errors.append(f"{loc}: {first['msg']}")
    reason = errors[-1] if errors else "no JSON object"
    raise StructuredOutputError(f"invalid structured output ({reason})")


def message_text(message: BaseMessage) -> str:
    """Text of a chat message whatever its content shape (string or list of parts)."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "".join(parts)


async def ainvoke_structured(
    llm: BaseChatModel,
    messages: list[BaseMessage],
    schema: type[T],
    default: T,
) -> Structured[T]:
    """Ask `llm`, parse into `schema`; on any failure return `default` and the reason.

    A model that supports it decodes under the schema, so its reply always parses; the
    parser still accepts what other models emit around their JSON.
    """
    extra = (
        llm.schema_kwargs(schema.model_json_schema()) if isinstance(llm, SchemaConstrained) else {}
    )
    try:
        reply = await llm.ainvoke(messages, **extra)
    except Exception as exc:  # a provider error must not fail the run
        logger.warning("structured call failed: %s", exc)
        return Structured(default, "", f"model call failed: {type(exc).__name__}: {exc}")
    raw = message_text(reply)
    try:
        return Structured(parse_structured(raw, schema), raw)
    except StructuredOutputError as exc:
        logger.info("falling back to default %s: %s", schema.__name__, exc)
        return Structured(default, raw, str(exc))
