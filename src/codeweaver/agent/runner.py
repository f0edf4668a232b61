"""Run the graph for one message of a thread and stream what happens.

`Assistant` is the Python entry point shared by the CLI (and later the API): it checks
the input, opens the persistent checkpointer, and turns LangGraph's stream into plain
`RunEvent`s — a step, a token of the answer, or the final result. A message is answered
by the pipeline or the librarian loop; both graphs share the checkpointer,
so either mode continues a thread the other started.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from langchain_core.messages import AIMessageChunk, HumanMessage, RemoveMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from codeweaver.agent.deps import Deps
from codeweaver.agent.graph import SUBGRAPH_NODES, build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.agent.state import SearchResult, Step, is_reset
from codeweaver.llm.structured import message_text

MAX_QUESTION_CHARS = 8000
ANSWER_NODES = frozenset({"generate_answer", "generate_with_history", "librarian_answer"})
# How a message is answered: the fixed pipeline or the librarian loop.
Mode = Literal["pipeline", "librarian"]
MODES: tuple[str, ...] = get_args(Mode)
# A node of each graph whose only edge goes to END: a state update made as that node
# schedules nothing, so clearing an interrupted turn does not look like a new one.
_CLOSING_NODE: dict[str, str] = {"pipeline": "combine_answers", "librarian": "librarian_check"}
# Channels the runner reports that not every route writes (small talk plans nothing, too
# many questions analyse nothing): cleared with the input so no earlier turn's — or an
# interrupted turn's — value is reported, or recorded as this turn's cache key.
_TURN_OUTPUTS: dict[str, Any] = {"canonical_question": "", "plan_case": None}

logger = logging.getLogger(__name__)


class InvalidQuestionError(ValueError):
    """The message cannot be answered as given; the text says why."""


class UnknownModeError(InvalidQuestionError):
    """No answering mode has this name."""


def validate_mode(mode: object) -> Mode:
    if mode not in MODES:
        raise UnknownModeError(f"unknown mode {mode!r}; the modes are: {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


# What text may hold that `isprintable` calls unprintable: whitespace controls, and the
# colour codes of pasted terminal output. Format characters (ZWJ, RLM, BOM…) and every
# space separator (NBSP, U+3000…) are letters' business and never counted.
_TEXT_CONTROLS = frozenset("\t\n\v\f\r")
_TERMINAL_CODES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|[()][0-9A-Za-z])"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _binary_reason(text: str) -> str | None:
    """Why `text` looks like bytes rather than writing, or None.

    Binary read as text (latin-1, or UTF-8 with errors="replace") shows C0/C1 control
    characters (about 1 in 9 random bytes; real text has none besides whitespace) and
    replacement characters U+FFFD or unassigned code points. bench/unicode_questions.py
    measures it: none of 31,123 questions of the shared data sets is rejected, none of
    2,578 samples of binary files (with or without their NULs) is accepted.
    """
    if "\x00" in text:
        return "a NUL character"
    controls = undecoded = 0
    for char in _TERMINAL_CODES.sub("", text):
        kind = unicodedata.category(char)
        if kind == "Cc" and char not in _TEXT_CONTROLS:
            controls += 1
        elif char == "\ufffd" or kind == "Cn":
            undecoded += 1
    # Controls decide: binary always has some (1.1% of the sparsest sample, a stripped ELF
    # header), text has none, so a few strays in a long paste are forgiven. Replacement
    # characters alone only when they are most of the text: a question about mojibake
    # ("I get ����") holds a few.
    size = max(len(text), 1)
    if (controls > 8 and controls / size >= 0.005) or (controls >= 3 and controls / size >= 0.015):
        return f"{controls} control characters"
    if (unreadable := controls + undecoded) >= 4 and unreadable / size >= 0.3:
        return f"{unreadable} control or undecodable characters"
    return None


def validate_question(text: object) -> str:
    """A clean question, or `InvalidQuestionError` for empty, huge, binary or invalid input."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidQuestionError("the question is not UTF-8 text") from None
    if not isinstance(text, str):
        raise InvalidQuestionError("the question must be text")
    # A lone surrogate (JSON "\ud800", or bytes decoded with surrogateescape) cannot be
    # encoded, so it would fail later in the cache, the model or the stream.
    if (surrogate := _SURROGATE.search(text)) is not None:
        raise InvalidQuestionError(
            "the question is not valid Unicode text (it holds the lone surrogate "
            f"U+{ord(surrogate.group()):04X}; send it as UTF-8)"
        )
    if (reason := _binary_reason(text)) is not None:
        raise InvalidQuestionError(f"the question contains binary data ({reason})")
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


def unanswered_ids(messages: list[Any]) -> list[str]:
    """Ids of the user messages that end `messages` with no answer after them."""
    ids: list[str] = []
    for message in reversed(messages):
        if message.type != "human":
            break
        if message.id is not None:
            ids.append(message.id)
    return ids


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
    ) -> AsyncGenerator[RunEvent, None]:
        question = validate_question(message)
        chosen = validate_mode(mode)
        graph = self.librarian if chosen == "librarian" else self._graph
        thread = thread_id or uuid.uuid4().hex
        config = {"configurable": {"thread_id": thread}}
        final: dict[str, Any] = {}
        # A turn cut off before its answer (client gone, process killed) left its question
        # in the thread; dropped with this input, so the model never reads it as asked.
        dropped = [RemoveMessage(id=i) for i in await self._unanswered(graph, config)]
        payload = {
            "question": question,
            "messages": [*dropped, HumanMessage(question)],
            **_TURN_OUTPUTS,
        }
        announced: list[tuple[str, str, str]] = []  # steps streamed when they started
        finished = False
        try:
            # Closed with this generator, so a dropped stream stops the run (and flushes
            # its checkpoints) before the cleanup below, not whenever it is collected.
            async with aclosing(
                graph.astream(
                    payload,
                    config,
                    stream_mode=["updates", "messages", "values", "custom"],
                    subgraphs=True,
                )
            ) as parts:
                async for namespace, kind, chunk in parts:
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
            finished = True
        finally:
            if not finished:  # cancelled, closed or failed before the answer was stored
                await self._drop_unanswered(graph, config, chosen)
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
