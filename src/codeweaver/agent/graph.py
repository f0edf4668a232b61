"""The LangGraph graphs: outer graph, single-question worker, search subgraph."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from codeweaver.agent.binding import bind
from codeweaver.agent.deps import Deps
from codeweaver.agent.nodes.analyze import (
    analyze_question,
    check_cache,
    generate_with_history,
    return_cached_answer,
    route_cache,
    route_question_type,
)
from codeweaver.agent.nodes.answer import combine_answers, generate_answer
from codeweaver.agent.nodes.check import check_answer, route_after_check
from codeweaver.agent.nodes.multi import (
    fanout_multi_questions,
    initiate_dynamic_search,
    make_worker,
)
from codeweaver.agent.nodes.plan import create_plan, handle_too_many_questions, route_plan
from codeweaver.agent.nodes.route import (
    answer_directly,
    rewrite_question,
    route_after_query,
    route_query,
)
from codeweaver.agent.nodes.search import (
    classify_intent,
    collect_results,
    evaluate_results,
    make_fanout,
    make_route_collected,
    make_search_node,
    refine_search,
    route_evaluation,
)
from codeweaver.agent.nodes.search_subgraph import filter_and_score, summarize_results
from codeweaver.agent.search_nodes import FALLBACK_NODE, SEARCH_NODES, fanned_out_nodes
from codeweaver.agent.state import (
    GraphState,
    PipelineOutput,
    SearchSubgraphInput,
    SearchSubgraphOutput,
    SearchSubgraphState,
    TurnInput,
)

# Nodes that run a graph of their own; their inner steps stream from inside them.
SUBGRAPH_NODES = frozenset({"search_subgraph", "run_single_question_worker"})
Compiled = CompiledStateGraph[Any, Any, Any, Any]


def build_search_subgraph(deps: Deps) -> Compiled:
    builder = StateGraph(
        SearchSubgraphState,
        input_schema=SearchSubgraphInput,
        output_schema=SearchSubgraphOutput,
    )
    builder.add_node("filter_and_score", bind(filter_and_score, deps))
    builder.add_node("summarize_results", bind(summarize_results, deps))
    builder.add_edge(START, "filter_and_score")
    builder.add_edge("filter_and_score", "summarize_results")
    builder.add_edge("summarize_results", END)
    return builder.compile(name="search_subgraph")


def _add_single_question(builder: StateGraph[Any, Any, Any, Any], deps: Deps) -> None:
    """The single-question part of the pipeline, from analyze_question to generate_answer."""
    for fn in (
        analyze_question,
        generate_with_history,
        check_cache,
        return_cached_answer,
        classify_intent,
        collect_results,
        evaluate_results,
        refine_search,
        generate_answer,
        check_answer,
    ):
        builder.add_node(fn.__name__, bind(fn, deps))
    for node in SEARCH_NODES:
        search: Any = make_search_node(node, deps)
        builder.add_node(node, search)
        builder.add_edge(node, "collect_results")
    builder.add_node("search_subgraph", build_search_subgraph(deps))

    # Routers return Literal types: LangGraph reads the destinations from them.
    builder.add_conditional_edges("analyze_question", route_question_type)
    builder.add_edge("generate_with_history", END)
    builder.add_conditional_edges("check_cache", route_cache)
    builder.add_edge("return_cached_answer", END)
    builder.add_conditional_edges("classify_intent", make_fanout(deps), fanned_out_nodes())
    builder.add_conditional_edges(
        "collect_results", make_route_collected(deps), [FALLBACK_NODE, "evaluate_results"]
    )
    builder.add_conditional_edges("evaluate_results", route_evaluation)
    builder.add_edge("refine_search", "classify_intent")
    builder.add_edge("search_subgraph", "generate_answer")
    builder.add_edge("generate_answer", "check_answer")


def build_worker_graph(deps: Deps) -> Compiled:
    """The single-question graph a multi-question worker runs in isolation."""
    builder = StateGraph(GraphState)
    _add_single_question(builder, deps)
    builder.add_edge(START, "analyze_question")
    # A worker's answer goes back to the outer graph, which combines the two.
    builder.add_conditional_edges(
        "check_answer",
        route_after_check,
        {"generate_answer": "generate_answer", "combine_answers": END, END: END},
    )
    return builder.compile(name="single_question")


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver[Any] | None = None) -> Compiled:
    """The outer graph (router, plan, search, answer, check), with an optional checkpointer.

    A run takes a `TurnInput` and returns a `PipelineOutput`: the answer and what the
    runner reports with it, not the working channels.
    """
    builder = StateGraph(GraphState, input_schema=TurnInput, output_schema=PipelineOutput)
    for fn in (route_query, answer_directly, rewrite_question, create_plan):
        builder.add_node(fn.__name__, bind(fn, deps))
    builder.add_node("handle_too_many_questions", bind(handle_too_many_questions, deps))
    builder.add_node("initiate_dynamic_search", bind(initiate_dynamic_search, deps))
    worker: Any = make_worker(build_worker_graph(deps))
    builder.add_node("run_single_question_worker", worker)
    builder.add_node("combine_answers", bind(combine_answers, deps))
    _add_single_question(builder, deps)

    builder.add_edge(START, "route_query")
    builder.add_conditional_edges("route_query", route_after_query)
    builder.add_edge("answer_directly", END)
    builder.add_edge("rewrite_question", "create_plan")
    builder.add_conditional_edges("create_plan", route_plan)
    builder.add_edge("handle_too_many_questions", END)
    builder.add_conditional_edges(
        "initiate_dynamic_search", fanout_multi_questions, ["run_single_question_worker"]
    )
    builder.add_edge("run_single_question_worker", "combine_answers")
    builder.add_conditional_edges("check_answer", route_after_check)
    builder.add_edge("combine_answers", END)
    return builder.compile(checkpointer=checkpointer, name="codeweaver")
