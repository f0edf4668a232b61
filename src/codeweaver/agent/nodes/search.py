"""classify_intent, the source fan-out, collect_results, evaluate_results, refine_search."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.types import Send
from pydantic import BaseModel

from codeweaver.agent import prompts
from codeweaver.agent.deps import (
    BASELINE_NODE,
    Deps,
    PlannedSearch,
    announce,
    label_steps,
    step,
)
from codeweaver.agent.language import is_english
from codeweaver.agent.state import (
    GraphState,
    RefineStrategy,
    SearchResult,
    SearchTask,
    Step,
    reset,
)
from codeweaver.llm.structured import Structured, ainvoke_structured

logger = logging.getLogger(__name__)

MIN_RESULTS = 2
MIN_MEAN_SCORE = 0.5
MAX_REFINEMENTS = 1


class IntentOut(BaseModel):
    intent: Literal["debugging", "learning", "code_review"]


class RefineOut(BaseModel):
    query: str


async def predict_intent(llm: BaseChatModel, question: str) -> Structured[IntentOut]:
    """The intent of one question; `learning` when the model's reply is unusable."""
    return await ainvoke_structured(
        llm, prompts.intent_messages(question), IntentOut, IntentOut(intent="learning")
    )


def skipped_steps(deps: Deps, intent: str) -> list[Step]:
    """A step per search node that will not run, saying why."""
    return [
        step(p.node, "observe", f"skipped: {p.skip_reason}")
        for p in deps.search_plan(intent)
        if p.source is None
    ]


async def classify_intent(state: GraphState, deps: Deps) -> dict[str, Any]:
    query = state.get("search_query") or state.get("question", "")
    if state.get("refinement_count", 0) and state.get("intent"):
        # Refinement changes the query, not what the user wants.
        intent = state["intent"]
        steps = [step("classify_intent", "think", f"{intent} (kept); query: {query}")]
        return {"search_query": query, "intermediate_steps": steps + skipped_steps(deps, intent)}
    result = await predict_intent(deps.llm, state.get("question", ""))
    intent = result.value.intent
    steps = [step("classify_intent", "think", intent)]
    if result.fallback_reason:
        steps.append(step("classify_intent", "error", f"fell back: {result.fallback_reason}"))
    steps += skipped_steps(deps, intent)
    return {"intent": intent, "search_query": query, "intermediate_steps": steps}


def make_fanout(deps: Deps) -> Callable[[GraphState], list[Send]]:
    def fanout_sources(state: GraphState) -> list[Send]:
        """One `Send` per usable source chosen for the intent: all run in parallel."""
        intent = state.get("intent", "learning")
        active = [p for p in deps.search_plan(intent) if p.source is not None]
        if not active:
            # Nothing usable: the baseline node still runs, so the turn reaches
            # collect_results and the steps say why it found nothing.
            active = [PlannedSearch(BASELINE_NODE, None, deps.settings.results_per_source)]
        return [
            Send(
                planned.node,
                SearchTask(
                    query=state.get("search_query") or state.get("question", ""),
                    intent=intent,
                    limit=planned.limit,
                    question=state.get("question", ""),
                    is_worker=state.get("is_worker", False),
                    worker_index=state.get("worker_index", 0),
                ),
            )
            for planned in active
        ]

    return fanout_sources


def make_search_node(node: str, deps: Deps) -> Callable[[SearchTask], Awaitable[dict[str, Any]]]:
    async def search(task: SearchTask) -> dict[str, Any]:
        return label_steps(task, await _search(task))

    async def _search(task: SearchTask) -> dict[str, Any]:
        source, why_not = deps.source_for(node)
        if source is None:
            return {
                "search_results": [],
                "intermediate_steps": [step(node, "observe", f"skipped: {why_not}")],
            }
        act = step(
            node, "act", f"{source.name}: {task['query']}", query=task["query"], limit=task["limit"]
        )
        announce(task, act)
        try:
            results = await asyncio.wait_for(
                source.search(task["query"], task["intent"], task["limit"]),
                timeout=deps.source_timeout,
            )
        except TimeoutError:
            failure = f"{source.name} timed out after {deps.source_timeout:g}s"
            return {"search_results": [], "intermediate_steps": [act, step(node, "error", failure)]}
        except Exception as exc:  # a failing source never fails the answer
            logger.info("%s failed: %s", source.name, exc)  # reported in the steps
            failure = f"{source.name} failed: {exc}"
            return {"search_results": [], "intermediate_steps": [act, step(node, "error", failure)]}
        results = [r for r in results if isinstance(r, dict) and r.get("title")]
        done = step(node, "observe", f"{len(results)} results from {source.name}")
        return {"search_results": results, "intermediate_steps": [act, done]}

    search.__name__ = node
    return search


def dedupe(results: list[SearchResult]) -> list[SearchResult]:
    """Keep the best-scored result per document: its stable reference, else its URL."""
    best: dict[str, SearchResult] = {}
    for result in results:
        key = result.get("reference") or result.get("url") or result["title"]
        kept = best.get(key)
        if kept is None or (result.get("score") or 0) > (kept.get("score") or 0):
            best[key] = result
    return list(best.values())


async def collect_results(state: GraphState, deps: Deps) -> dict[str, Any]:
    results = state.get("search_results") or []
    unique = dedupe(results)
    note = f"{len(unique)} results" + (
        f" ({len(results) - len(unique)} duplicates dropped)" if len(unique) < len(results) else ""
    )
    return {
        "search_results": reset(*unique),
        "intermediate_steps": [step("collect_results", "observe", note)],
    }


def needs_refinement(results: list[SearchResult]) -> tuple[bool, str]:
    if len(results) < MIN_RESULTS:
        return True, f"only {len(results)} results"
    scores = [r["score"] for r in results if r.get("score") is not None]
    if scores:
        mean = sum(scores) / len(scores)  # type: ignore[arg-type]
        if mean < MIN_MEAN_SCORE:
            return True, f"mean relevance {mean:.2f} < {MIN_MEAN_SCORE}"
    return False, "enough relevant results"


async def evaluate_results(state: GraphState, deps: Deps) -> dict[str, Any]:
    weak, why = needs_refinement(state.get("search_results") or [])
    refinements = state.get("refinement_count", 0)
    refine = weak and refinements < MAX_REFINEMENTS
    if weak and not refine:
        why += "; already refined once, going on"
    return {
        "needs_refinement": refine,
        "intermediate_steps": [
            step("evaluate_results", "think", ("refine: " if refine else "proceed: ") + why)
        ],
    }


def route_evaluation(state: GraphState) -> str:
    return "refine_search" if state.get("needs_refinement") else "search_subgraph"


def choose_strategy(state: GraphState) -> RefineStrategy:
    query = state.get("search_query") or state.get("question", "")
    if not is_english(query):
        return "TRANSLATE"
    if len(state.get("search_results") or []) < MIN_RESULTS:
        return "MORE_GENERAL"
    return "MORE_SPECIFIC"


async def refine_search(state: GraphState, deps: Deps) -> dict[str, Any]:
    strategy = choose_strategy(state)
    question = state.get("question", "")
    query = state.get("search_query") or question
    canonical = state.get("canonical_question", "")
    steps = []
    if strategy == "TRANSLATE" and canonical and is_english(canonical):
        new_query = canonical  # analyze_question already wrote it in English
    else:
        result = await ainvoke_structured(
            deps.llm,
            prompts.refine_messages(question, query, strategy),
            RefineOut,
            RefineOut(query=canonical or query),
        )
        new_query = " ".join(result.value.query.split()) or query
        if result.fallback_reason:
            steps.append(step("refine_search", "error", f"fell back: {result.fallback_reason}"))
    steps.insert(0, step("refine_search", "act", f"{strategy}: {new_query}"))
    return {
        "search_query": new_query,
        "refine_strategy": strategy,
        "refinement_count": state.get("refinement_count", 0) + 1,
        "search_results": reset(),
        "intermediate_steps": steps,
    }
