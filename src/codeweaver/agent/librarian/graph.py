"""The librarian graph: model decisions and tool runs in a loop, then an answer.

    START → librarian_start → librarian_agent ⇄ librarian_tools
    librarian_agent → librarian_answer → librarian_check → END

It runs over `LibrarianState` (the pipeline's `GraphState` and the loop's channels)
with the same checkpointer, so both modes continue one thread: each reads the other's
turns from `messages`, and each turn's first node clears the per-turn channels with the
reset token. The nodes are in `librarian/nodes.py`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from codeweaver.agent.binding import bind
from codeweaver.agent.deps import Deps
from codeweaver.agent.librarian.nodes import (
    MAX_STEPS,
    librarian_agent,
    librarian_answer,
    librarian_check,
    librarian_start,
    librarian_tools,
    route_decision,
)
from codeweaver.agent.state import LibrarianState, TurnInput, TurnOutput

LIBRARIAN_NODES = (
    "librarian_start",
    "librarian_agent",
    "librarian_tools",
    "librarian_answer",
    "librarian_check",
)


def build_librarian_graph(
    deps: Deps,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    max_steps: int = MAX_STEPS,
) -> Any:
    """The compiled librarian graph; `max_steps` is lowered by tests.

    A run takes a `TurnInput` and returns a `TurnOutput`: the answer, its sources and
    the turn's steps.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    builder = StateGraph(LibrarianState, input_schema=TurnInput, output_schema=TurnOutput)
    builder.add_node("librarian_start", bind(partial(librarian_start, max_steps=max_steps), deps))
    builder.add_node("librarian_agent", bind(partial(librarian_agent, max_steps=max_steps), deps))
    for fn in (librarian_tools, librarian_answer, librarian_check):
        builder.add_node(fn.__name__, bind(fn, deps))
    builder.add_edge(START, "librarian_start")
    builder.add_edge("librarian_start", "librarian_agent")
    builder.add_conditional_edges("librarian_agent", route_decision)  # its Literal: the targets
    builder.add_edge("librarian_tools", "librarian_agent")
    builder.add_edge("librarian_answer", "librarian_check")
    builder.add_edge("librarian_check", END)
    graph = builder.compile(checkpointer=checkpointer, name="codeweaver_librarian")
    # A step takes two supersteps (decide, run) and LangGraph stops at 25 by default.
    return graph.with_config(recursion_limit=2 * max_steps + 10)
