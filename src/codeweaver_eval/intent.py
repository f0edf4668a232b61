"""The chat model's reading of a question's intent, measured against the pipeline's rules
(`codeweaver.agent.rules.intent`) by `codeweaver eval intent --by model`."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from codeweaver.llm.structured import Structured, ainvoke_structured
from codeweaver.vocabulary import Intent
from codeweaver_eval.prompts import intent_messages


class IntentOut(BaseModel):
    intent: Intent


async def predict_intent(llm: BaseChatModel, question: str) -> Structured[IntentOut]:
    """The model's intent for `question`; `learning` when its reply is unusable."""
    return await ainvoke_structured(
        llm, intent_messages(question), IntentOut, IntentOut(intent="learning")
    )
