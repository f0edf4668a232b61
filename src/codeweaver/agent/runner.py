"""Run the graph for one message of a thread and stream what happens.

`Assistant` is what the service runs for every door, and the Python API: it checks the
input (`stream`; `stream_checked` for a door that checked it), and turns LangGraph's
stream into plain `RunEvent`s — a step, a token of the answer, or the final result. A
message is answered by the pipeline or the librarian loop; both graphs share the
checkpointer, so either mode continues a thread the other started. Each run counts its
own model calls (a `UsageMeter` in the run's callbacks) into `RunResult.usage`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, RemoveMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from codeweaver.agent.answering.citations import cited_first
from codeweaver.agent.deps import Deps
from codeweaver.agent.graph import SUBGRAPH_NODES, build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.agent.result import RunEvent, RunResult
from codeweaver.agent.rules.input_check import validate_mode, validate_question
from codeweaver.agent.state import PipelineOutput, is_reset
from codeweaver.llm.structured import message_text
from codeweaver.llm.usage import UsageMeter
from codeweaver.telemetry import answer_callbacks
from codeweaver.words.language import detect_language

ANSWER_NODES = frozenset({"generate_answer", "generate_with_history", "librarian_answer"})
# A node of each graph whose only edge goes to END: a state update made as that node
# schedules nothing, so clearing an interrupted turn does not look like a new one.
_CLOSING_NODE: dict[str, str] = {"pipeline": "combine_answers", "librarian": "librarian_check"}
# Channels the runner reports that not every route writes (small talk plans nothing, too
# many questions analyse nothing): cleared with the input so no earlier turn's — or an
# interrupted turn's — value is reported, or recorded as this turn's cache key.
_TURN_OUTPUTS: dict[str, Any] = {"canonical_question": "", "plan_case": None}

logger = logging.getLogger(__name__)

__all__ = ["ANSWER_NODES", "Assistant", "RunEvent", "RunResult"]


def unanswered_ids(messages: list[Any]) -> list[str]:
    """Ids of the user messages that end `messages` with no answer after them."""
    ids: list[str] = []
    for message in reversed(messages):
        if message.type != "human":
            break
        if message.id is not None:
            ids.append(message.id)
    return ids


def _cache_keys(final: PipelineOutput) -> tuple[str, ...]:
    parts = [a.get("cache_key", "") for a in final.get("multi_answers") or [] if not is_reset(a)]
    keys = parts if final.get("plan_case") == "multiple_questions" else []
    keys = keys or [final.get("canonical_question") or ""]
    return tuple(k for k in keys if k)


@dataclass
class Assistant:
    """Answers messages of persistent threads with the compiled graph."""

    deps: Deps
    checkpointer: BaseCheckpointSaver[Any] | None = None
    _graph: Any = field(init=False, repr=False)
    _librarian: Any = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self._graph = build_graph(self.deps, self.checkpointer)

    @property
    def graph(self) -> Any:
        return self._graph

    @property
    def librarian(self) -> Any:
        """The librarian graph, built on first use with the same checkpointer, so both
        modes continue the same threads."""
        if self._librarian is None:
            self._librarian = build_librarian_graph(self.deps, self.checkpointer)
        return self._librarian

    async def stream(
        self, message: str, thread_id: str | None = None, mode: str = "pipeline"
    ) -> AsyncGenerator[RunEvent, None]:
        """The run for `message`, checked first (`validate_question`)."""
        question = validate_question(message)
        async with aclosing(self.stream_checked(question, thread_id, mode)) as events:
            async for event in events:
                yield event

    async def stream_checked(
        self, question: str, thread_id: str | None = None, mode: str = "pipeline"
    ) -> AsyncGenerator[RunEvent, None]:
        """The run for a question its door has checked already: the service checks each
        message once, when it admits it (`ChatService.admit`)."""
        chosen = validate_mode(mode)
        graph = self.librarian if chosen == "librarian" else self._graph
        thread = thread_id or uuid.uuid4().hex
        config = {"configurable": {"thread_id": thread}}
        # The last `values` of the run: the keys of the graph's output schema.
        final: PipelineOutput = {}
        # A turn cut off before its answer (client gone, process killed) left its question
        # in the thread; dropped with this input, so the model never reads it as asked.
        dropped = [RemoveMessage(id=i) for i in await self._unanswered(graph, config)]
        payload = {
            "question": question,
            "messages": [*dropped, HumanMessage(question)],
            **_TURN_OUTPUTS,
        }
        announced: set[str] = set()  # ids of the steps streamed when they started
        # LangChain hands a run's callbacks down to every model call in it, subgraphs and
        # nodes calling the model directly alike; the model's own callbacks would also
        # count other runs it serves meanwhile.
        meter = UsageMeter()
        # Spans of this run (none unless tracing is on): the question's length, not its text.
        traced = answer_callbacks(
            question_length=len(question), language=detect_language(question), mode=chosen
        )
        finished = False
        try:
            # Closed with this generator, so a dropped stream stops the run (and flushes
            # its checkpoints) before the cleanup below, not whenever it is collected.
            async with aclosing(
                graph.astream(
                    payload,
                    {**config, "callbacks": [meter, *traced]},
                    stream_mode=["updates", "messages", "values", "custom"],
                    subgraphs=True,
                    # `values` streams every channel unless told the output schema's.
                    output_keys=graph.output_channels,
                )
            ) as parts:
                async for namespace, kind, chunk in parts:
                    if kind == "values" and not namespace:
                        final = chunk
                    elif kind == "custom" and isinstance(chunk, dict) and "step" in chunk:
                        item = chunk["step"]
                        announced.add(item["id"])
                        yield RunEvent("step", step=item, node=str(item.get("node", "")))
                    elif kind == "updates":
                        for node, update in chunk.items():
                            if node in SUBGRAPH_NODES:
                                continue  # their steps were already streamed from inside
                            for item in (update or {}).get("intermediate_steps", []) or []:
                                if is_reset(item) or item["id"] in announced:
                                    continue  # a marker, or a step shown when it started
                                yield RunEvent("step", step=item, node=node)
                    elif kind == "messages":
                        token, meta = chunk
                        node = meta.get("langgraph_node", "")
                        if node in ANSWER_NODES and isinstance(token, AIMessageChunk):
                            text = message_text(token)
                            if text:
                                yield RunEvent("token", text=text, node=node)
            finished = True
        finally:
            if not finished:  # cancelled, closed or failed before the answer was stored
                await self._drop_unanswered(graph, config, chosen)
        pipeline = chosen == "pipeline"  # the librarian neither plans nor caches
        # Cited sources first, so every door can list them and collapse the rest.
        answer, sources, _ = cited_first(final.get("answer", ""), final.get("sources", []))
        result = RunResult(
            thread_id=thread,
            question=question,
            answer=answer,
            sources=sources,
            steps=[s for s in final.get("intermediate_steps", []) if not is_reset(s)],
            plan_case=final.get("plan_case") if pipeline else None,
            question_type=final.get("question_type") if pipeline else None,
            cache_keys=_cache_keys(final) if pipeline else (),
            code_findings=tuple(final.get("code_findings") or ()),
            usage=meter.snapshot(),
        )
        yield RunEvent("result", result=result)

    async def seed(
        self, thread_id: str, turns: Sequence[tuple[str, str]], mode: str = "pipeline"
    ) -> None:
        """Append `turns` (question, answer) to the thread's messages as if answered here.

        For a conversation held elsewhere (an OpenAI client sends its whole transcript):
        the next message is answered with that history in the model's memory. Nothing is
        run; without a checkpointer threads keep no memory, so this does nothing.
        """
        chosen = validate_mode(mode)
        if self.checkpointer is None or not turns:
            return
        graph = self.librarian if chosen == "librarian" else self._graph
        messages = [m for q, a in turns for m in (HumanMessage(q), AIMessage(a))]
        # As the closing node, so the update schedules nothing (see `_CLOSING_NODE`).
        config = {"configurable": {"thread_id": thread_id}}
        await graph.aupdate_state(config, {"messages": messages}, as_node=_CLOSING_NODE[chosen])

    async def _unanswered(self, graph: Any, config: dict[str, Any]) -> list[str]:
        """Ids of the questions that end the thread with no answer after them."""
        if self.checkpointer is None:
            return []
        state = await graph.aget_state(config)
        return unanswered_ids(state.values.get("messages") or [])

    async def _drop_unanswered(self, graph: Any, config: dict[str, Any], mode: str) -> None:
        """Best effort, at once: remove an interrupted turn's question from the thread.

        The next turn drops it anyway (a killed process runs no cleanup), so a failure
        here is only logged; shielded, so a second cancellation cannot cut it in half.
        """
        if self.checkpointer is None:
            return
        try:
            await asyncio.shield(self._remove_unanswered(graph, config, mode))
        except asyncio.CancelledError:
            raise
        except Exception:
            thread = config["configurable"]["thread_id"]
            logger.warning(
                "could not clear the interrupted turn of thread %s", thread, exc_info=True
            )

    async def _remove_unanswered(self, graph: Any, config: dict[str, Any], mode: str) -> None:
        stale = await self._unanswered(graph, config)
        if stale:
            await graph.aupdate_state(
                config,
                {"messages": [RemoveMessage(id=i) for i in stale]},
                as_node=_CLOSING_NODE[mode],
            )

    async def ask(
        self, message: str, thread_id: str | None = None, mode: str = "pipeline"
    ) -> RunResult:
        async for event in self.stream(message, thread_id, mode):
            if event.result is not None:
                return event.result
        raise RuntimeError("the run ended without a result")  # pragma: no cover
