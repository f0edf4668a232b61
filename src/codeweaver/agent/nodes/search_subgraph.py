"""The search subgraph's nodes: filter_and_score → summarize_results."""

from __future__ import annotations

from typing import Any

from codeweaver.agent.deps import Deps
from codeweaver.agent.state import SearchResult, SearchSubgraphState
from codeweaver.agent.steps import step
from codeweaver.agent.text import extractive_summary
from codeweaver.words import overlap

MIN_SNIPPET_CHARS = 40
# A source score this low means only incidental words matched: citing it would mislead.
MIN_SOURCE_SCORE = 0.13
MAX_KEPT = 5
# Blend of the source's own score and lexical overlap with the question.
SOURCE_WEIGHT = 0.5


def is_relevant(result: SearchResult) -> bool:
    """Whether a result may reach the prompt: it has a link, some text, and its source did
    not score it as an incidental match.

    A page documenting a named API (`api`: the installed docs', npm's) is exempt from the
    score floor: it never enters the answer prompt, it is cited only where the answer's
    code calls that API (`answering.api_citations`), and its source's own bar already chose
    it. The installed docs' bar reads the ranking's estimate that an answer uses the page,
    while the score a page carries is its relevance alone: `pandas.read_csv` for "read a
    CSV file and skip the first two rows" passes their bar at 0.10, under this floor."""
    if not result.get("url") or len(result.get("snippet", "").strip()) < MIN_SNIPPET_CHARS:
        return False
    score = result.get("score")
    return score is None or score >= MIN_SOURCE_SCORE or bool(result.get("api"))


def relevance(result: SearchResult, query: str) -> float:
    """The source's score blended with the words the result shares with the query."""
    lexical = overlap(query, f"{result['title']} {result['snippet']}")
    score = result.get("score")
    if score is None:
        return lexical
    return SOURCE_WEIGHT * float(score) + (1 - SOURCE_WEIGHT) * lexical


async def filter_and_score(state: SearchSubgraphState, deps: Deps) -> dict[str, Any]:
    """Keep the relevant results, best first, at most `MAX_KEPT`."""
    results = state.get("search_results") or []
    query = " ".join(
        filter(
            None,
            [state["question"], state.get("canonical_question"), state.get("search_query")],
        )
    )
    kept: list[SearchResult] = []
    for result in results:
        if not is_relevant(result):
            continue
        scored: SearchResult = {**result, "relevance": round(relevance(result, query), 3)}
        kept.append(scored)
    kept.sort(key=lambda r: r.get("relevance", 0.0), reverse=True)
    kept = kept[:MAX_KEPT]
    note = f"kept {len(kept)} of {len(results)}"
    return {
        "filtered_results": kept,
        "intermediate_steps": [step("filter_and_score", "observe", note)],
    }


async def summarize_results(state: SearchSubgraphState, deps: Deps) -> dict[str, Any]:
    """An extractive summary of each kept result, for the answer prompt."""
    query = state.get("canonical_question") or state["question"]
    summarised: list[SearchResult] = [
        {**r, "summary": extractive_summary(r["snippet"], query)}
        for r in state.get("filtered_results") or []
    ]
    return {
        "filtered_results": summarised,
        "intermediate_steps": [
            step("summarize_results", "observe", f"summarised {len(summarised)} results")
        ],
    }
