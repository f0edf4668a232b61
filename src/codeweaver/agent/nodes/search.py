"""classify_intent, the source fan-out and web fallback, collect_results, evaluate_results,
refine_search."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langgraph.types import Send
from pydantic import BaseModel

from codeweaver.agent import prompts
from codeweaver.agent.deps import Deps, PlannedSearch
from codeweaver.agent.nodes.search_subgraph import is_relevant
from codeweaver.agent.rules.intent import rule_intent
from codeweaver.agent.rules.queries import general_query, query_variations, search_form
from codeweaver.agent.search_nodes import BASELINE_NODE, FALLBACK_NODE, MIN_DOCUMENTS
from codeweaver.agent.state import (
    GraphState,
    RefineStrategy,
    SearchResult,
    SearchTask,
    Step,
    reset,
)
from codeweaver.agent.steps import announce, label_steps, step
from codeweaver.llm.structured import ainvoke_structured
from codeweaver.sources.calling import Failed, search_safely
from codeweaver.sources.index_files import IndexBuilding
from codeweaver.vocabulary import Intent
from codeweaver.words.language import is_english

MIN_RESULTS = 2
MAX_REFINEMENTS = 1


class RefineOut(BaseModel):
    """The model's refined search query."""

    query: str


async def skipped_steps(deps: Deps, intent: Intent) -> list[Step]:
    """A step per search node that will not run, saying why."""
    return [
        step(p.node, "observe", f"skipped: {p.skip_reason}")
        for p in await deps.asearch_plan(intent)
        if p.source is None
    ]


async def classify_intent(state: GraphState, deps: Deps) -> dict[str, Any]:
    """The question's intent by rule (kept on a refinement) and the query to search."""
    query = state.get("search_query") or search_form(state["question"])
    if state.get("refinement_count", 0) and state.get("intent"):
        # Refinement changes the query, not what the user wants.
        intent = state["intent"]
        steps = [step("classify_intent", "think", f"{intent} (kept); query: {query}")]
        skipped = await skipped_steps(deps, intent)
        return {"search_query": query, "intermediate_steps": steps + skipped}
    intent = rule_intent(state["question"])
    steps = [step("classify_intent", "think", f"{intent} (rules)")]
    steps += await skipped_steps(deps, intent)
    return {"intent": intent, "search_query": query, "intermediate_steps": steps}


def make_fanout(deps: Deps) -> Callable[[GraphState], list[Send]]:
    """The router that fans the question out to the search nodes its intent uses."""

    def fanout_sources(state: GraphState) -> list[Send]:
        """One `Send` per usable source chosen for the intent: all run in parallel."""
        intent = state.get("intent", "learning")
        active = [p for p in deps.search_plan(intent) if p.source is not None]
        if not active:
            # Nothing usable: the baseline node still runs, so the turn reaches
            # collect_results and the steps say why it found nothing.
            active = [PlannedSearch(BASELINE_NODE, None, deps.settings.results_per_source)]
        return [Send(planned.node, search_task(state, planned.limit)) for planned in active]

    return fanout_sources


def search_task(state: GraphState, limit: int) -> SearchTask:
    """What a search node gets: the query, its variations on the first round, the limit."""
    query = state.get("search_query") or state["question"]
    # A refined query replaces the first round's; its variations were already tried.
    first_round = not state.get("refinement_count", 0)
    queries = (
        query_variations(query, state["question"], state.get("canonical_question"))
        if first_round
        else [query]
    )
    return SearchTask(
        query=query,
        queries=queries,
        intent=state.get("intent", "learning"),
        limit=limit,
        is_worker=state.get("is_worker", False),
        worker_index=state.get("worker_index", 0),
    )


def make_search_node(node: str, deps: Deps) -> Callable[[SearchTask], Awaitable[dict[str, Any]]]:
    """The search node `node`: the first usable source of its row runs every query."""

    async def search(task: SearchTask) -> dict[str, Any]:
        return label_steps(task, await _search(task))

    async def _search(task: SearchTask) -> dict[str, Any]:
        source, why_not = await deps.asource_for(node)
        if source is None:
            return {
                "search_results": [],
                "intermediate_steps": [step(node, "observe", f"skipped: {why_not}")],
            }
        queries = task.get("queries") or [task["query"]]
        shown = " | ".join(queries)
        extra: dict[str, Any] = {"queries": queries} if len(queries) > 1 else {}
        act = step(
            node,
            "act",
            f"{source.name}: {shown}",
            query=task["query"],
            limit=task["limit"],
            **extra,
        )
        announce(task, act)
        outcomes = await asyncio.gather(
            *(
                search_safely(source, q, task["intent"], task["limit"], timeout=deps.source_timeout)
                for q in queries
            )
        )
        found: list[SearchResult] = []
        failures: list[Failed] = []
        for outcome in outcomes:
            if isinstance(outcome, Failed):
                failures.append(outcome)
            else:
                found += [r for r in outcome.results if isinstance(r, dict) and r.get("title")]
        building = [f.error for f in failures if isinstance(f.error, IndexBuilding)]
        if building:  # not a failure: the source is there next time, nothing to report
            note = str(building[0]).partition(": ")[2]
            skipped = f"skipped: {source.name} is not ready ({note})"
            steps = [act, step(node, "observe", skipped, not_ready=source.name)]
        else:
            steps = [
                act,
                *(step(node, "error", t) for t in dict.fromkeys(f.text for f in failures)),
            ]
        if len(failures) == len(queries):  # a failing source never fails the answer
            return {"search_results": [], "intermediate_steps": steps}
        results = dedupe(found)
        note = f"{len(results)} results from {source.name}"
        steps.append(step(node, "observe", note, answered=source.name))
        return {"search_results": results, "intermediate_steps": steps}

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
    """Merge the round's results; ask for the web once when too few documents came back."""
    results = state.get("search_results") or []
    unique = dedupe(results)
    note = f"{len(unique)} results" + (
        f" ({len(results) - len(unique)} duplicates dropped)" if len(unique) < len(results) else ""
    )
    steps = [step("collect_results", "observe", note)]
    fallback = state.get("web_fallback", "none")
    if fallback == "pending":
        fallback = "done"  # the web has answered (or failed): once per question
    elif fallback == "none" and len(unique) < MIN_DOCUMENTS:
        source, why_not = await deps.asource_for(FALLBACK_NODE)
        if source is not None:
            fallback = "pending"
            steps.append(step("collect_results", "think", "too few documents: searching the web"))
        else:
            steps.append(step("collect_results", "observe", f"no web fallback: {why_not}"))
            fallback = "done"
    return {"search_results": reset(*unique), "web_fallback": fallback, "intermediate_steps": steps}


def make_route_collected(deps: Deps) -> Callable[[GraphState], str | list[Send]]:
    """The router after collect_results: the web fallback, or evaluation."""

    def route_collected(state: GraphState) -> str | list[Send]:
        """To the web fallback when collect_results asked for it, else on to evaluation."""
        if state.get("web_fallback") == "pending":
            limit = deps.settings.results_per_source
            return [Send(FALLBACK_NODE, search_task(state, limit))]
        return "evaluate_results"

    return route_collected


def needs_refinement(results: list[SearchResult]) -> tuple[bool, str]:
    """Refine only when the round found nothing relevant: on real questions a second round
    after a relevant first one cost a model call and a search and changed no answer."""
    relevant = sum(1 for r in results if is_relevant(r))
    if not relevant:
        return True, f"nothing relevant in {len(results)} results"
    return False, f"{relevant} relevant of {len(results)} results"


async def evaluate_results(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Decide whether a second search round could find what the first did not."""
    weak, why = needs_refinement(state.get("search_results") or [])
    refinements = state.get("refinement_count", 0)
    refine = weak and refinements < MAX_REFINEMENTS
    strategy = choose_strategy(state) if refine else None
    if weak and not refine:
        why += "; already refined once, going on"
    elif strategy == "MORE_GENERAL" and rule_query(state) is None:
        refine, why = False, why + "; a broader query would find the same, going on"
    elif strategy != "TRANSLATE" and refine and not online_answered(state, deps):
        # Offline sources answer a query the same way every time, and they already saw
        # every form of this one; with no online source reachable, a second round finds
        # nothing new (offline, 15 refinements of 24 real questions found nothing).
        refine = False
        why += "; no online source answered and the offline ones saw every form, going on"
    return {
        "needs_refinement": refine,
        "intermediate_steps": [
            step("evaluate_results", "think", ("refine: " if refine else "proceed: ") + why)
        ],
    }


def online_answered(state: GraphState, deps: Deps) -> bool:
    """Whether an online source (not `offline`) answered a search of this turn."""
    for item in state.get("intermediate_steps") or []:
        name = (item.get("data") or {}).get("answered")
        source = deps.sources.get(name) if isinstance(name, str) else None
        if source is not None and not getattr(source, "offline", False):
            return True
    return False


def route_evaluation(state: GraphState) -> Literal["refine_search", "search_subgraph"]:
    """Refine the query once more, or filter what was found."""
    return "refine_search" if state.get("needs_refinement") else "search_subgraph"


def choose_strategy(state: GraphState) -> RefineStrategy:
    """TRANSLATE a non-English query that has no English search form yet; broaden a query
    that found nothing; make one whose results were all off topic more specific."""
    query = state.get("search_query") or state["question"]
    canonical = state.get("canonical_question") or ""
    if not is_english(query) and not is_english(canonical):
        return "TRANSLATE"
    if len(state.get("search_results") or []) < MIN_RESULTS:
        return "MORE_GENERAL"
    return "MORE_SPECIFIC"


def rule_query(state: GraphState) -> str | None:
    """The refined query rules can write, or None (then the model writes it). A broader
    query is the core terms of the English one, which the first round already searched."""
    if choose_strategy(state) != "MORE_GENERAL":
        return None
    query = state.get("search_query") or state["question"]
    if not is_english(query):
        query = state.get("canonical_question") or query
    return general_query(query)


async def refine_search(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Write the next round's query: by rule when broader, else by the model."""
    strategy = choose_strategy(state)
    question = state["question"]
    query = state.get("search_query") or question
    canonical = state.get("canonical_question", "")
    steps = []
    ruled = rule_query(state)
    if ruled is not None:
        new_query = ruled  # no model call: the core terms of the query
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
