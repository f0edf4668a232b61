"""Two questions in one message: initiate_dynamic_search, the fan-out and the worker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from codeweaver.agent.deps import Deps
from codeweaver.agent.state import GraphState
from codeweaver.agent.steps import step


async def initiate_dynamic_search(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Say which questions of the message are answered apart, before the workers start."""
    questions = state.get("sub_questions") or []
    return {
        "intermediate_steps": [
            step(
                "initiate_dynamic_search",
                "act",
                f"searching {len(questions)} questions",
                questions=questions,
            )
        ]
    }


def fanout_multi_questions(state: GraphState) -> list[Send]:
    """One worker per question, each with its own fresh state."""
    return [
        Send(
            "run_single_question_worker",
            {
                "question": question,
                "language": state.get("language", "en"),
                "is_worker": True,
                "worker_index": index,
                "refinement_count": 0,
                "messages": [],
            },
        )
        for index, question in enumerate(state.get("sub_questions") or [])
    ]


def make_worker(
    worker_graph: CompiledStateGraph[Any, Any, Any, Any],
) -> Callable[[GraphState, RunnableConfig], Awaitable[dict[str, Any]]]:
    """The node that runs `worker_graph` for one question of a two-question message."""

    async def run_single_question_worker(
        child: GraphState, config: RunnableConfig
    ) -> dict[str, Any]:
        """Run the single-question graph in isolation; only `multi_answers` goes out."""
        result = await worker_graph.ainvoke(child, config)
        return {
            "multi_answers": result.get("multi_answers", []),
            "intermediate_steps": result.get("intermediate_steps", []),
        }

    return run_single_question_worker
