"""create_plan and handle_too_many_questions."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field

from codeweaver.agent import prompts
from codeweaver.agent.deps import Deps
from codeweaver.agent.quick import decline_text
from codeweaver.agent.rules.guard import guard
from codeweaver.agent.state import GraphState, PlanCase
from codeweaver.agent.steps import step
from codeweaver.llm.structured import ainvoke_structured
from codeweaver.words import share_subject


class PlanOut(BaseModel):
    """Small models list questions reliably but misjudge a named case, so they list."""

    questions: list[str] = Field(default_factory=list)


def decide_case(questions: list[str], message: str) -> tuple[PlanCase, list[str]]:
    """The case follows from the distinct questions. Two questions about one subject are
    one topic seen from two angles, searched as the original message."""
    distinct = list(dict.fromkeys(q.strip() for q in questions if q and q.strip()))
    if len(distinct) >= 3:
        return "too_many", distinct
    if len(distinct) == 2 and not share_subject(*distinct):
        return "multiple_questions", distinct
    return "single_topic", [message]


def plan_by_rules(message: str) -> tuple[PlanCase, list[str], str] | None:
    """(case, questions, how) when the rules settle the message alone, else None.

    Rules decide whenever the message's lines, punctuation and subjects show its
    questions: the guard declines 3+ independent questions, keeps a post or one subject
    whole, and two independent questions are split unless they share a subject.
    """
    decision = guard(message)
    if decision.case == "too_many":
        return "too_many", decision.candidates, f"guard: {decision.reason}"
    if decision.case == "single_topic":
        return "single_topic", [message], f"rule: {decision.reason}"
    if len(decision.candidates) == 2:
        case, questions = decide_case(decision.candidates, message)
        return case, questions, f"rule: {decision.reason}"
    return None


async def plan_message(message: str, deps: Deps) -> tuple[PlanCase, list[str], str, str | None]:
    """Decide the case: (case, questions, how it was decided, fallback reason).

    The rules go first; the model is asked only to list the questions of a message they
    cannot split ("what is X and how do I use it?"). Small models list questions
    reliably but misjudge a case named in the prompt, so the case is always derived from
    the list. `how` is "model" when the model decided.
    """
    # The rules read the user's raw text (up to 8,000 characters) in a worker thread, off
    # the event loop. That alone does not save the loop from one slow regex call, which
    # holds the GIL throughout: their patterns must also be linear (tests check both).
    ruled = await asyncio.to_thread(plan_by_rules, message)
    if ruled is not None:
        case, questions, how = ruled
        return case, questions, how, None
    result = await ainvoke_structured(
        deps.llm, prompts.plan_messages(message), PlanOut, PlanOut(questions=[message])
    )
    case, questions = decide_case(result.value.questions, message)
    return case, questions, "model", result.fallback_reason


async def create_plan(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Decide how many questions the message asks: one, two answered apart, or too many."""
    message = state["question"].strip()
    case, questions, how, fallback = await plan_message(message, deps)
    steps = [step("create_plan", "think", f"{case} ({how})", questions=questions)]
    if fallback:
        steps.append(step("create_plan", "error", f"plan fell back to default: {fallback}"))
    return {
        "plan_case": case,
        "sub_questions": questions,
        "intermediate_steps": steps,
    }


AfterPlan = Literal["analyze_question", "initiate_dynamic_search", "handle_too_many_questions"]
_AFTER_PLAN: dict[str, AfterPlan] = {
    "single_topic": "analyze_question",
    "multiple_questions": "initiate_dynamic_search",
    "too_many": "handle_too_many_questions",
}


def route_plan(state: GraphState) -> AfterPlan:
    """One question to its analysis, two to the workers, too many to the decline."""
    return _AFTER_PLAN[state.get("plan_case") or "single_topic"]


async def handle_too_many_questions(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Decline a message of three or more questions, listing the questions it asks."""
    questions = state.get("sub_questions") or [state["question"]]
    answer = decline_text(questions, state.get("language", "en"))
    return {
        "answer": answer,
        "sources": [],
        "messages": [AIMessage(answer)],
        "intermediate_steps": [
            step("handle_too_many_questions", "observe", f"{len(questions)} questions: declined")
        ],
    }
