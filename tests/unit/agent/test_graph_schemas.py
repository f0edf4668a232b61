"""The graphs' doors: what a run takes and what it gives back, in both modes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from codeweaver.agent.graph import build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import (
    GraphState,
    LibrarianState,
    PipelineOutput,
    TurnInput,
    TurnOutput,
)
from tests.fakes import make_deps

QUESTION = "How do I read a file line by line in Python?"
ANSWER = "Iterate over the lines of a file with a for loop [1]."
SCRIPT = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
    "librarian_step": [
        json.dumps({"tool": "search_official_docs", "input": "read lines"}),
        json.dumps({"tool": "answer"}),
    ],
    "librarian_answer": ANSWER,
}


def keys(schema: Any) -> set[str]:
    return set(schema.__required_keys__ | schema.__optional_keys__)


class Recorder:
    """A compiled graph whose top-level `values` chunks are kept as the runner reads them."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.values: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)

    async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for namespace, kind, chunk in self.graph.astream(*args, **kwargs):
            if kind == "values" and not namespace:
                self.values.append(chunk)
            yield namespace, kind, chunk


def test_the_graphs_declare_their_input_and_output(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    pipeline, librarian = build_graph(deps), build_librarian_graph(deps)
    assert pipeline.builder.input_schema is librarian.builder.input_schema is TurnInput
    assert set(pipeline.output_channels) == keys(PipelineOutput)
    assert set(librarian.output_channels) == keys(TurnOutput)
    # The loop's channels are the librarian's alone.
    assert not {k for k in pipeline.channels if k.startswith("librarian_")}
    assert {k for k in librarian.channels if k.startswith("librarian_")} == {
        k for k in keys(LibrarianState) - keys(GraphState)
    }


async def test_a_run_returns_exactly_the_declared_output(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT, cache_enabled=False)
    payload = {"question": QUESTION, "messages": [HumanMessage(QUESTION)]}
    config = {"configurable": {"thread_id": "t"}}
    final = await build_graph(deps, InMemorySaver()).ainvoke(payload, config)
    assert set(final) == keys(PipelineOutput)
    final = await build_librarian_graph(deps, InMemorySaver()).ainvoke(payload, config)
    assert set(final) == keys(TurnOutput)
    assert final["answer"] == ANSWER


async def test_the_runner_reads_the_declared_output_in_both_modes(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, SCRIPT, cache_enabled=False)
    assistant = Assistant(deps, checkpointer=InMemorySaver())
    pipeline, librarian = Recorder(assistant.graph), Recorder(assistant.librarian)
    assistant._graph, assistant._librarian = pipeline, librarian

    first = await assistant.ask(QUESTION, "shared")
    second = await assistant.ask("How do I skip blank lines?", "shared", mode="librarian")

    assert set(pipeline.values[-1]) == keys(PipelineOutput)
    assert set(librarian.values[-1]) == keys(TurnOutput)
    assert first.answer == second.answer == ANSWER
    assert first.plan_case == "single_topic" and first.cache_keys == (QUESTION,)
    assert second.plan_case is None and second.steps[0]["node"] == "librarian_start"


def test_studio_can_show_the_graphs_input_and_output(tmp_path: Path) -> None:
    """LangGraph Studio draws its input form from these JSON schemas (pydantic builds them)."""
    deps, _ = make_deps(tmp_path, SCRIPT)
    for graph, output in (
        (build_graph(deps), PipelineOutput),
        (build_librarian_graph(deps), TurnOutput),
    ):
        assert set(graph.get_input_jsonschema()["properties"]) == keys(TurnInput)
        assert set(graph.get_output_jsonschema()["properties"]) == keys(output)
