"""Answers the rules settle before anything heavy loads: a message of three or more
independent questions is declined, and an English question already answered is read from
the answer cache, each as the pipeline would.

The pipeline decides both by the same rules (`route_query`, `create_plan` through the guard,
then `handle_too_many_questions`; or `analyze_question`, whose cache key for an English
question is the question itself, then `check_cache` and `return_cached_answer`), so the
first turn of a thread gets the same answer and steps either way. The command line uses
this to answer in about a second, before the model, the graph, the sources or the docs
index are loaded (the turn is not recorded in a thread). This module imports only the
rules; the cache, when asked.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from codeweaver.agent.result import RunResult
from codeweaver.agent.rules.guard import depends_on_context, followup_type, guard
from codeweaver.agent.rules.router import route_message
from codeweaver.agent.user_text import say
from codeweaver.vocabulary import step
from codeweaver.words.language import answer_language, is_english

if TYPE_CHECKING:
    from codeweaver.config import Settings


def tidy_question(text: str) -> str:
    """The question with its whitespace normalised (an English question's cache key)."""
    return " ".join(text.split())


def decline_text(questions: list[str], language: str) -> str:
    """The decline of a message holding `questions` (three or more)."""
    listing = "\n".join(f"- {q}" for q in questions)
    return say("too_many", language, count=max(3, len(questions)), listing=listing)


def declined_by_rules(message: str, response_language: str | None = None) -> RunResult | None:
    """The pipeline's answer to the first message of a thread when the rules decline it
    (three or more independent questions); None when the pipeline would do anything else."""
    text = message.strip()
    route = route_message(text, None)
    if route.route != "rag_required":
        return None
    decision = guard(text)
    if decision.case != "too_many":
        return None
    questions = decision.candidates
    language = answer_language(text, response_language)
    steps = [
        step("route_query", "think", f"{route.route}: {route.reason}"),
        step("create_plan", "think", f"too_many (guard: {decision.reason})", questions=questions),
        step("handle_too_many_questions", "observe", f"{len(questions)} questions: declined"),
    ]
    return RunResult(
        thread_id=uuid.uuid4().hex,
        question=message,
        answer=decline_text(questions, language),
        sources=[],
        steps=steps,
        plan_case="too_many",
        question_type=None,
    )


def cached_by_rules(message: str, settings: Settings) -> RunResult | None:
    """The pipeline's answer to the first message of a thread when it would come from the
    answer cache with no model call (an English question, one topic by rule); None when
    the pipeline would do anything else, or the cache has no answer."""
    text = message.strip()
    if not settings.cache_enabled or not is_english(text):
        return None
    route = route_message(text, None)
    decision = guard(text)
    if route.route != "rag_required" or decision.case != "single_topic":
        return None
    question_type = followup_type(text, None)
    if question_type == "clarification" or depends_on_context(text):
        return None
    from codeweaver.memory.caches import build_cache

    key = tidy_question(text)
    entry = build_cache(settings).lookup(key)
    if entry is None:
        return None
    steps = [
        step("route_query", "think", f"{route.route}: {route.reason}"),
        step("create_plan", "think", f"single_topic (rule: {decision.reason})", questions=[text]),
        step("analyze_question", "think", f"{question_type}; cache key: {key}", should_cache=True),
        step("check_cache", "observe", f"hit: {entry.question}"),
        step(
            "return_cached_answer", "observe", "answered from the cache", sources=len(entry.sources)
        ),
    ]
    return RunResult(
        thread_id=uuid.uuid4().hex,
        question=message,
        answer=entry.answer,
        sources=list(entry.sources),
        steps=steps,
        plan_case="single_topic",
        question_type=question_type,
        cache_keys=(key,),
    )
