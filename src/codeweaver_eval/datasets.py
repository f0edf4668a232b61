"""Reading evaluation sets from JSONL, with errors that name the file and line."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from codeweaver.agent.state import PlanCase
from codeweaver.vocabulary import Intent

INTENT_LABELS: tuple[str, ...] = get_args(Intent)
"""The intent label space: the graph's own `Intent`."""

PLAN_CASES: tuple[str, ...] = get_args(PlanCase)
"""The planner's cases: the graph's own `PlanCase`."""

STACKEVAL_TYPE_TO_INTENT: Mapping[str, str] = {
    "debugging": "debugging",
    "implementation": "learning",
    "conceptual": "learning",
    "optimization": "learning",
}
"""StackEval `type` → our intent (data/PROVENANCE.md)."""


class DatasetError(ValueError):
    """A dataset file that cannot be read; the message names the file and, if known, the line."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class IntentExample:
    """One question with its expected intent; `source_type` is the StackEval type, if any."""

    line: int
    question: str
    intent: str
    source_type: str | None = None


@dataclass(frozen=True)
class SplitExample:
    """One message and the questions it should be split into."""

    line: int
    message: str
    questions: tuple[str, ...]

    @property
    def expected_case(self) -> str:
        return expected_case(len(self.questions))


def expected_case(n_questions: int) -> str:
    """1 → `single_topic`, 2 → `multiple_questions`, 3+ → `too_many`."""
    if n_questions < 1:
        raise ValueError("a message holds at least one question")
    return PLAN_CASES[min(n_questions, 3) - 1]


def intent_for_stackeval_type(source_type: str) -> str | None:
    """Our intent for a StackEval type (case-insensitive), or None when unknown."""
    return STACKEVAL_TYPE_TO_INTENT.get(source_type.strip().casefold())


def split_post(question: str) -> tuple[str, str]:
    """A StackEval `question` as (title, body): its first non-blank line is the title."""
    title, _, body = question.strip().partition("\n")
    return title.strip(), body.strip()


def read_json_array(path: str | Path, what: str = "a JSON array") -> list[Any]:
    """A JSON file holding an array (a CoNaLa release); `DatasetError` names `what` it
    should hold when it is anything else."""
    p = Path(path)
    if not p.is_file():
        raise DatasetError(p, "no such file")
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(p, f"not JSON: {exc}") from None
    if not isinstance(data, list):
        raise DatasetError(p, f"expected {what}")
    return data


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; raise `DatasetError` on bad input."""
    p = Path(path)
    if not p.exists():
        raise DatasetError(p, "no such file")
    if not p.is_file():
        raise DatasetError(p, "not a regular file")
    seen_any = False
    try:
        with p.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if b"\x00" in raw:
                    raise DatasetError(p, "binary content (NUL byte), expected JSONL text", number)
                try:
                    text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise DatasetError(p, f"not UTF-8 text ({exc.reason})", number) from exc
                if not text.strip():
                    continue
                seen_any = True
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DatasetError(p, f"malformed JSON: {exc.msg}", number) from exc
                if not isinstance(value, dict):
                    kind = type(value).__name__
                    raise DatasetError(p, f"expected a JSON object, got {kind}", number)
                yield number, value
    except OSError as exc:
        raise DatasetError(p, f"cannot read: {exc.strerror or exc}") from exc
    if not seen_any:
        raise DatasetError(p, "empty file (no JSON lines)")


def load_intent_examples(path: str | Path, *, limit: int | None = None) -> list[IntentExample]:
    """Read intent examples: StackEval lines (`question` + `questionMetadata.type` or
    `metadata.type`) or lines carrying an `intent` already in `INTENT_LABELS`."""
    _check_limit(limit)
    examples: list[IntentExample] = []
    for line, obj in read_jsonl(path):
        question = _text_field(path, line, obj, "question")
        examples.append(_intent_example(path, line, obj, question))
        if limit is not None and len(examples) >= limit:
            break
    return examples


def load_split_examples(
    path: str | Path,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[SplitExample]:
    """Read split examples: `{"message": str, "questions": [str, ...]}` (at least one);
    other fields (provenance, style) are ignored. `sample` keeps that many examples drawn
    at random with `seed` (after `limit`), in file order."""
    _check_limit(limit)
    if sample is not None and sample < 1:
        raise ValueError("sample must be a positive integer")
    examples = _split_examples(path, limit)
    if sample is not None and sample < len(examples):
        keep = sorted(random.Random(seed).sample(range(len(examples)), sample))
        examples = [examples[i] for i in keep]
    return examples


def _split_examples(path: str | Path, limit: int | None) -> list[SplitExample]:
    examples: list[SplitExample] = []
    for line, obj in read_jsonl(path):
        message = _text_field(path, line, obj, "message")
        questions = obj.get("questions")
        if not isinstance(questions, list) or not questions:
            raise DatasetError(path, "field 'questions' must be a non-empty list", line)
        if not all(isinstance(q, str) and q.strip() for q in questions):
            raise DatasetError(path, "field 'questions' must hold non-empty strings", line)
        examples.append(SplitExample(line, message, tuple(questions)))
        if limit is not None and len(examples) >= limit:
            break
    return examples


def _intent_example(
    path: str | Path, line: int, obj: dict[str, Any], question: str
) -> IntentExample:
    if "intent" in obj:
        intent = obj["intent"]
        if not isinstance(intent, str) or intent not in INTENT_LABELS:
            allowed = ", ".join(INTENT_LABELS)
            raise DatasetError(path, f"field 'intent' must be one of {allowed}", line)
        return IntentExample(line, question, intent)
    meta = obj.get("questionMetadata", obj.get("metadata"))
    source_type = meta.get("type") if isinstance(meta, dict) else None
    if not isinstance(source_type, str):
        raise DatasetError(
            path, "missing field 'intent' or 'questionMetadata.type'/'metadata.type'", line
        )
    intent = intent_for_stackeval_type(source_type)
    if intent is None:
        known = ", ".join(STACKEVAL_TYPE_TO_INTENT)
        raise DatasetError(path, f"unknown StackEval type {source_type!r} (known: {known})", line)
    return IntentExample(line, question, intent, source_type)


def _text_field(path: str | Path, line: int, obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    if value is None:
        raise DatasetError(path, f"missing field {name!r}", line)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(path, f"field {name!r} must be a non-empty string", line)
    return value


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise ValueError("limit must be a positive integer")
