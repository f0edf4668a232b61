"""`eval intent --by model`: the model's reply read into one of the graph's intents."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver_eval.datasets import INTENT_LABELS
from codeweaver_eval.intent import IntentOut, predict_intent


async def test_the_model_s_intent_is_read_from_its_json() -> None:
    llm = ScriptedChatModel(script={"classify_intent": '{"intent": "code_review"}'})
    result = await predict_intent(llm, "Can you review this function?")
    assert result.ok and result.value.intent == "code_review"
    assert llm.tasks() == ["classify_intent"]


async def test_a_label_outside_the_graph_s_falls_back_to_learning() -> None:
    llm = ScriptedChatModel(script={"classify_intent": '{"intent": "implementation"}'})
    result = await predict_intent(llm, "How do I merge dicts?")
    assert not result.ok and result.value.intent == "learning"


def test_the_schema_takes_exactly_the_data_sets_labels() -> None:
    assert [IntentOut(intent=label).intent for label in INTENT_LABELS] == list(INTENT_LABELS)
    with pytest.raises(ValidationError):
        IntentOut.model_validate({"intent": "implementation"})
