"""The compiled graph holds to the product's topology: node names and routes are a contract."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.graph import build_graph, build_worker_graph
from tests.fakes import make_deps

END, START = "__end__", "__start__"
# Three named source nodes "& other sources"; the web is the fallback.
SOURCES = [
    "search_stackoverflow",
    "search_github",
    "search_github_issues",
    "search_official_docs",
    "search_python_docs",  # Python's own prose docs, where installed
    "search_package_docs",  # the npm packages' docs of a JavaScript/TypeScript project
    "search_knowledge_base",
    "search_local_code",
]
WEB = "search_web"

# (source, target, conditional): the pipeline's edges, router and checks included.
SPEC_EDGES = {
    # The query router in front of the plan.
    (START, "route_query", False),
    ("route_query", "answer_directly", True),
    ("route_query", "rewrite_question", True),
    ("route_query", "create_plan", True),
    ("answer_directly", END, False),
    ("rewrite_question", "create_plan", False),
    ("create_plan", "analyze_question", True),
    ("create_plan", "initiate_dynamic_search", True),
    ("create_plan", "handle_too_many_questions", True),
    ("handle_too_many_questions", END, False),
    ("analyze_question", "generate_with_history", True),
    ("analyze_question", "check_cache", True),
    ("generate_with_history", END, False),
    ("check_cache", "return_cached_answer", True),
    ("check_cache", "classify_intent", True),
    ("return_cached_answer", END, False),
    *{("classify_intent", s, True) for s in SOURCES},
    *{(s, "collect_results", False) for s in SOURCES},
    # The web search runs when fewer than 3 documents came back.
    ("collect_results", WEB, True),
    (WEB, "collect_results", False),
    ("collect_results", "evaluate_results", True),
    ("evaluate_results", "refine_search", True),
    ("evaluate_results", "search_subgraph", True),
    ("refine_search", "classify_intent", False),
    ("search_subgraph", "generate_answer", False),
    # The grounding check after generation, with bounded retries.
    ("generate_answer", "check_answer", False),
    ("check_answer", "generate_answer", True),
    ("check_answer", "combine_answers", True),
    ("check_answer", END, True),
    ("combine_answers", END, False),
    ("initiate_dynamic_search", "run_single_question_worker", True),
    ("run_single_question_worker", "combine_answers", False),
}


def edges(graph: object) -> set[tuple[str, str, bool]]:
    return {(e.source, e.target, e.conditional) for e in graph.edges}  # type: ignore[attr-defined]


def test_outer_graph_matches_spec(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    drawn = build_graph(deps).get_graph()
    assert edges(drawn) == SPEC_EDGES
    assert set(drawn.nodes) == {n for e in SPEC_EDGES for n in e[:2]}


def test_search_subgraph_filters_then_summarises(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    drawn = build_graph(deps).get_graph(xray=1)
    assert ("search_subgraph:filter_and_score", "search_subgraph:summarize_results", False) in (
        edges(drawn)
    )


def test_worker_runs_the_single_question_graph(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    worker = edges(build_worker_graph(deps).get_graph())
    single = {
        e
        for e in SPEC_EDGES
        if e[0]
        not in {
            START,
            "route_query",
            "answer_directly",
            "rewrite_question",
            "create_plan",
            "handle_too_many_questions",
            "initiate_dynamic_search",
            "run_single_question_worker",
            "combine_answers",
            "check_answer",  # its way out differs: a worker ends instead of combining
        }
    }
    assert single <= worker
    assert (START, "analyze_question", False) in worker
    assert ("check_answer", END, True) in worker
    assert ("check_answer", "generate_answer", True) in worker
    assert not any("combine_answers" in e[:2] for e in worker)
