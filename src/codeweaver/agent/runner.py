"""Run the graph for one message of a thread and stream what happens.

`Assistant` is the Python entry point shared by the CLI (and later the API): it checks
the input, opens the persistent checkpointer, and turns LangGraph's stream into plain
`RunEvent`s — a step, a token of the answer, or the final result. A message is answered
by the pipeline (SPEC §2) or the librarian loop (§4); both graphs share the checkpointer,
so either mode continues a thread the other started.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from langchain_core.messages import AIMessageChunk, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from codeweaver.agent.deps import Deps
from codeweaver.agent.graph import SUBGRAPH_NODES, build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.agent.state import SearchResult, Step, is_reset
from codeweaver.llm.structured import message_text

MAX_QUESTION_CHARS = 8000
ANSWER_NODES = frozenset({"generate_answer", "generate_with_history", "librarian_answer"})
# How a message is answered: the fixed pipeline (SPEC §2) or the librarian loop (§4).
Mode = Literal["pipeline", "librarian"]
MODES: tuple[str, ...] = get_args(Mode)


class InvalidQuestionError(ValueError):
    """The message cannot be answered as given; the text says why."""


class UnknownModeError(InvalidQuestionError):
    """No answering mode has this name."""


def validate_mode(mode: object) -> Mode:
    if mode not in MODES:
        raise UnknownModeError(f"unknown mode {mode!r}; the modes are: {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


def validate_question(text: object) -> str:
    """A clean question, or `InvalidQuestionError` for empty, huge or binary input."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidQuestionError("the question is not UTF-8 text") from None
    if not isinstance(text, str):
        raise InvalidQuestionError("the question must be text")
    if "\x00" in text or sum(not (c.isprintable() or c in "\n\r\t") for c in text) > 8:
        raise InvalidQuestionError("the question contains binary data")
    cleaned = text.strip()
    if not cleaned:
        raise InvalidQuestionError("the question is empty")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise InvalidQuestionError(
            f"the question is {len(cleaned):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,} (shorten it or put the material in the knowledge base)"
        )
    return cleaned


@dataclass(frozen=True)
class RunResult:
    thread_id: str
    question: str
    answer: str
    sources: list[SearchResult]
    steps: list[Step]
    plan_case: str | None
    question_type: str | None
    # The canonical questions the answer (or each part of it) may be cached under.
    cache_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "question": self.question,
            "answer": self.answer,
            "sources": [
                {"n": n, **{k: v for k, v in s.items() if k != "snippet"}}
                for n, s in enumerate(self.sources, 1)
            ],
            "plan_case": self.plan_case,
            "question_type": self.question_type,
            "steps": self.steps,
        }


def _step_key(item: Step) -> tuple[str, str, str]:
    return (str(item.get("node")), str(item.get("kind")), str(item.get("message")))


def _cache_keys(final: dict[str, Any]) -> tuple[str, ...]:
    parts = [a.get("cache_key", "") for a in final.get("multi_answers") or [] if not is_reset(a)]
    keys = parts if final.get("plan_case") == "multiple_questions" else []
    keys = keys or [final.get("canonical_question") or ""]
    return tuple(k for k in keys if k)


@dataclass(frozen=True)
class RunEvent:
    kind: Literal["step", "token", "result"]
    step: Step | None = None
    text: str = ""
    node: str = ""
    result: RunResult | None = None


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
    ) -> AsyncIterator[RunEvent]:
        question = validate_question(message)
        chosen = validate_mode(mode)
        graph = self.librarian if chosen == "librarian" else self._graph
        thread = thread_id or uuid.uuid4().hex
        config = {"configurable": {"thread_id": thread}}
        final: dict[str, Any] = {}
        payload = {"question": question, "messages": [HumanMessage(question)]}
        announced: list[tuple[str, str, str]] = []  # steps streamed when they started
        async for namespace, kind, chunk in graph.astream(
            payload,
            config,
            stream_mode=["updates", "messages", "values", "custom"],
            subgraphs=True,
        ):
            if kind == "values" and not namespace:
                final = chunk
            elif kind == "custom" and isinstance(chunk, dict) and "step" in chunk:
                item = chunk["step"]
                announced.append(_step_key(item))
                yield RunEvent("step", step=item, node=str(item.get("node", "")))
            elif kind == "updates":
                for node, update in chunk.items():
                    if node in SUBGRAPH_NODES:
                        continue  # their steps were already streamed from inside
                    for item in (update or {}).get("intermediate_steps", []) or []:
                        if is_reset(item):
                            continue
                        if _step_key(item) in announced:
                            announced.remove(_step_key(item))  # shown when it started
                            continue
                        yield RunEvent("step", step=item, node=node)
            elif kind == "messages":
                token, meta = chunk
                node = meta.get("langgraph_node", "")
                if node in ANSWER_NODES and isinstance(token, AIMessageChunk):
                    text = message_text(token)
                    if text:
                        yield RunEvent("token", text=text, node=node)
        pipeline = chosen == "pipeline"  # the librarian neither plans nor caches
        result = RunResult(
            thread_id=thread,
            question=question,
            answer=final.get("answer", ""),
            sources=final.get("sources", []),
            steps=[s for s in final.get("intermediate_steps", []) if not is_reset(s)],
            plan_case=final.get("plan_case") if pipeline else None,
            question_type=final.get("question_type") if pipeline else None,
            cache_keys=_cache_keys(final) if pipeline else (),
        )
        yield RunEvent("result", result=result)

    async def ask(
        self, message: str, thread_id: str | None = None, mode: str = "pipeline"
    ) -> RunResult:
        async for event in self.stream(message, thread_id, mode):
            if event.result is not None:
                return event.result
        raise RuntimeError("the run ended without a result")  # pragma: no cover
