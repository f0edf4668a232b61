"""analyze_question, generate_with_history, check_cache and return_cached_answer."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from codeweaver.agent import prompts
from codeweaver.agent.answering.citations import tidy_answer
from codeweaver.agent.deps import Deps
from codeweaver.agent.history import earlier_question, history_turns
from codeweaver.agent.nodes.answer import finish
from codeweaver.agent.quick import tidy_question
from codeweaver.agent.rules.guard import depends_on_context, followup_type
from codeweaver.agent.state import GraphState
from codeweaver.agent.steps import step
from codeweaver.llm.scripts import in_language_kwargs
from codeweaver.llm.structured import ainvoke_structured, message_text
from codeweaver.words import lost_in_translation
from codeweaver.words.language import is_english

logger = logging.getLogger(__name__)


class CanonicalOut(BaseModel):
    """The model's English form of a question, the cache key of a non-English one."""

    canonical_question: str = ""


async def english_form(llm: BaseChatModel, question: str) -> tuple[str, str | None]:
    """The question in English, and why it cannot serve as a cache key when it cannot.

    English questions are keyed by their own text; others are translated by the model,
    and a translation that dropped a number or a name is not a key.
    """
    canonical = tidy_question(question)
    if is_english(question):
        return canonical, None
    result = await ainvoke_structured(
        llm, prompts.analyze_messages(question), CanonicalOut, CanonicalOut()
    )
    translated = tidy_question(result.value.canonical_question)
    if result.fallback_reason or not translated or not is_english(translated):
        return canonical, result.fallback_reason or "the model did not answer in English"
    lost = lost_in_translation(question, translated)
    if lost:  # still the better search query, but not a trustworthy cache key
        return translated, f"the translation dropped {', '.join(sorted(lost))}"
    return translated, None


async def analyze_question(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Relation to the conversation and cacheability by rule; the model is asked only to
    put a non-English question into English, so every cache key is English."""
    question = state["question"]
    messages = state.get("messages") or []
    earlier = earlier_question(messages)
    # A rewritten follow-up already stands alone: it is searched, never read from history.
    rewritten = state.get("route") == "history_required"
    question_type = "independent" if rewritten else followup_type(question, earlier)
    should_cache = question_type != "clarification" and not depends_on_context(question)
    steps = []
    canonical = tidy_question(question)
    if question_type != "clarification":
        canonical, problem = await english_form(deps.llm, question)
        if problem:
            should_cache = False  # a key that is not English would never meet its twin
            steps.append(step("analyze_question", "error", f"no English form: {problem}"))
    steps.insert(
        0,
        step(
            "analyze_question",
            "think",
            f"{question_type}; cache key: {canonical}",
            should_cache=should_cache,
        ),
    )
    return {
        "question_type": question_type,
        "should_cache": should_cache,
        "canonical_question": canonical,
        "intermediate_steps": steps,
    }


def route_question_type(state: GraphState) -> Literal["generate_with_history", "check_cache"]:
    """A follow-up about the last answer is answered from the conversation; else the cache."""
    if state.get("question_type") == "clarification":
        return "generate_with_history"
    return "check_cache"


async def generate_with_history(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Answer a follow-up about the last answer from the conversation: no search, no cache."""
    messages = state.get("messages") or []
    question = state["question"]
    language = state.get("language", "en")
    prompt = prompts.history_messages(history_turns(messages), question, language)
    sources = state.get("sources") or []
    try:
        steer = in_language_kwargs(deps.llm, language, question)
        answer = tidy_answer(message_text(await deps.llm.ainvoke(prompt, **steer)), sources)
    except Exception as exc:  # a failed follow-up must still end the turn cleanly
        logger.warning("follow-up generation failed: %s", exc)
        note = f"follow-up failed: {type(exc).__name__}: {exc}"
        update = finish(state, "generate_with_history", note, sources, note)
        update["intermediate_steps"].insert(0, step("generate_with_history", "error", note))
        return update
    return finish(
        state,
        "generate_with_history",
        answer,
        sources,
        "answered from the conversation (no cache, no search)",
    )


async def check_cache(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Look the canonical question up in the answer cache, when the question may be cached."""
    if not deps.settings.cache_enabled or not state.get("should_cache", False):
        why = "cache off" if not deps.settings.cache_enabled else "not cacheable"
        return {
            "cached_result": None,
            "intermediate_steps": [step("check_cache", "observe", f"skipped: {why}")],
        }
    key = state.get("canonical_question") or state["question"]
    try:  # embedding and the vector store are blocking work: off the event loop
        entry = await asyncio.to_thread(deps.cache.lookup, key)
    except Exception as exc:  # a broken cache is a miss, never a failed answer
        logger.warning("cache lookup failed: %s", exc)
        return {
            "cached_result": None,
            "intermediate_steps": [step("check_cache", "error", f"cache unavailable: {exc}")],
        }
    if entry is None:
        return {
            "cached_result": None,
            "intermediate_steps": [step("check_cache", "observe", "miss")],
        }
    return {
        "cached_result": {"answer": entry.answer, "sources": entry.sources, "model": entry.model},
        "intermediate_steps": [step("check_cache", "observe", f"hit: {entry.question}")],
    }


def route_cache(state: GraphState) -> Literal["return_cached_answer", "classify_intent"]:
    """A cache hit is the answer; a miss goes on to the search."""
    return "return_cached_answer" if state.get("cached_result") else "classify_intent"


async def return_cached_answer(state: GraphState, deps: Deps) -> dict[str, Any]:
    """End the turn with the cached answer and its sources."""
    cached = state.get("cached_result") or {}
    return finish(
        state,
        "return_cached_answer",
        cached.get("answer", ""),
        cached.get("sources", []),
        "answered from the cache",
    )
