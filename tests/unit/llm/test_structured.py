"""The structured-output helper against what small models really emit."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.llm.structured import (
    StructuredOutputError,
    ainvoke_structured,
    parse_structured,
)
from codeweaver_eval.prompts import intent_messages


class Intent(BaseModel):
    intent: Literal["debugging", "learning", "code_review"]


class Plan(BaseModel):
    case: Literal["single_topic", "multiple_questions", "too_many"]
    questions: list[str] = []


# Outputs of the kind Qwen2.5-Coder 0.5B/1.5B produce for "reply with JSON" prompts.
GOOD = [
    ('{"intent": "learning"}', "learning"),
    ('```json\n{"intent": "debugging"}\n```', "debugging"),
    ('```\n{"intent": "code_review"}\n```', "code_review"),
    ('Sure! Here is the classification:\n{"intent": "debugging"}\nHope this helps.', "debugging"),
    ("{'intent': 'learning'}", "learning"),
    ('{"intent": "learning",}', "learning"),
    ('{\n  "intent": "debugging"\n', "debugging"),  # truncated at max_tokens
    ('```json\n{"intent": "learning"} // the user wants to learn\n```', "learning"),
]


@pytest.mark.parametrize(("raw", "expected"), GOOD)
def test_accepts_real_model_shapes(raw: str, expected: str) -> None:
    assert parse_structured(raw, Intent).intent == expected


def test_korean_text_inside_json_survives() -> None:
    raw = (
        '```json\n{"case": "multiple_questions", "questions": ["JWT가 뭐야?", '
        '"CORS 에러는 어떻게 해결해?"]}\n```'
    )
    plan = parse_structured(raw, Plan)
    assert plan.questions == ["JWT가 뭐야?", "CORS 에러는 어떻게 해결해?"]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "returned nothing"),
        ("I cannot classify this question.", "no JSON object"),
        ('{"intent": "curiosity"}', "intent"),
        ('{"category": "learning"}', "intent"),
        ("[1, 2, 3]", "no JSON object"),
    ],
)
def test_rejects_with_a_reason(raw: str, why: str) -> None:
    with pytest.raises(StructuredOutputError, match=why):
        parse_structured(raw, Intent)


async def test_falls_back_to_default_and_says_why() -> None:
    llm = ScriptedChatModel(script={"classify_intent": "The intent is clearly learning."})
    result = await ainvoke_structured(
        llm, intent_messages("How do I sort a list?"), Intent, Intent(intent="learning")
    )
    assert not result.ok
    assert result.value.intent == "learning"
    assert result.fallback_reason is not None and "no JSON object" in result.fallback_reason
    assert result.raw == "The intent is clearly learning."


async def test_provider_error_falls_back() -> None:
    def boom(messages: object) -> str:
        raise ConnectionError("provider unreachable")

    llm = ScriptedChatModel(script={"classify_intent": boom})
    result = await ainvoke_structured(llm, intent_messages("q"), Intent, Intent(intent="debugging"))
    assert result.value.intent == "debugging"
    assert result.fallback_reason is not None and "provider unreachable" in result.fallback_reason


async def test_valid_reply_is_used() -> None:
    llm = ScriptedChatModel(script={"classify_intent": '```json\n{"intent": "code_review"}\n```'})
    result = await ainvoke_structured(llm, intent_messages("q"), Intent, Intent(intent="learning"))
    assert result.ok and result.value.intent == "code_review"
