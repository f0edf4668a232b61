"""route_query, answer_directly and rewrite_question: the router in front of the plan."""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel

from codeweaver.agent import prompts
from codeweaver.agent.deps import Deps
from codeweaver.agent.history import earlier_question, history_turns
from codeweaver.agent.nodes.answer import finish
from codeweaver.agent.quick import tidy_question
from codeweaver.agent.rules.router import route_message
from codeweaver.agent.state import GraphState, new_turn
from codeweaver.agent.steps import step
from codeweaver.agent.user_text import say
from codeweaver.llm.scripts import in_language_kwargs
from codeweaver.llm.structured import ainvoke_structured, message_text
from codeweaver.words import new_terms
from codeweaver.words.language import answer_language

logger = logging.getLogger(__name__)


class RewriteOut(BaseModel):
    """The model's standalone form of a follow-up."""

    question: str = ""


async def route_query(state: GraphState, deps: Deps) -> dict[str, Any]:
    """The first node of a turn: clear the last turn's channels and pick the route."""
    message = state["question"].strip()
    decision = route_message(message, earlier_question(state.get("messages") or []))
    return {
        **new_turn(step("route_query", "think", f"{decision.route}: {decision.reason}")),
        "route": decision.route,
        "language": answer_language(message, deps.settings.response_language),
    }


AfterQuery = Literal["answer_directly", "rewrite_question", "create_plan"]
_AFTER_QUERY: dict[str, AfterQuery] = {
    "simple": "answer_directly",
    "history_required": "rewrite_question",
    "rag_required": "create_plan",
}


def route_after_query(state: GraphState) -> AfterQuery:
    """To the direct answer, the rewrite of a follow-up, or the plan."""
    return _AFTER_QUERY[state.get("route", "rag_required")]


async def answer_directly(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Small talk: one short reply, no search, no citation, never cached."""
    language = state.get("language", "en")
    prompt = prompts.direct_messages(state["question"], language)
    try:
        steer = in_language_kwargs(deps.llm, language, state["question"])
        answer = message_text(await deps.llm.ainvoke(prompt, **steer)).strip()
    except Exception as exc:  # a greeting must never fail the turn
        logger.warning("direct answer failed: %s", exc)
        answer = ""
    answer = answer or say("small_talk", language)
    return finish(state, "answer_directly", answer, [], "answered directly (no search)")


def _keeps(rewritten: str, follow_up: str, earlier: str) -> bool:
    """Whether a rewrite kept every subject the follow-up added."""
    return not new_terms(follow_up, earlier) - new_terms(rewritten, earlier)


async def rewrite_question(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Turn a follow-up into a standalone question; the plan and search use that."""
    follow_up = state["question"]
    earlier = earlier_question(state.get("messages") or []) or ""
    history = history_turns(state.get("messages") or [])
    result = await ainvoke_structured(
        deps.llm, prompts.rewrite_messages(history, follow_up), RewriteOut, RewriteOut()
    )
    rewritten = tidy_question(result.value.question)
    steps = []
    if result.fallback_reason or not rewritten or not _keeps(rewritten, follow_up, earlier):
        why = result.fallback_reason or "the rewrite dropped what the follow-up asks"
        rewritten = tidy_question(f"{follow_up} ({earlier})")
        steps.append(step("rewrite_question", "error", f"rewrite fell back: {why}"))
    steps.insert(0, step("rewrite_question", "think", f"standalone: {rewritten}"))
    return {"question": rewritten, "original_question": follow_up, "intermediate_steps": steps}
