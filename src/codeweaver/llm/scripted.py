"""A scripted chat model: answers by prompt task, for tests, benchmarks and demos.

Every prompt CodeWeaver sends starts with a system message whose `name` is the task
(`create_plan`, `analyze_question`, …; see `codeweaver.agent.prompts`). The script maps a
task to a reply: a string, a list of strings used in turn (the last one repeats), or a
function of the messages. Calls are recorded so tests can assert which tasks ran.

Each reply reports its usage as a provider would, in `usage_metadata` (on the last chunk
when streamed): words for tokens — the whitespace-split words of every message sent, and
of the reply — so token counts are deterministic and tests can compute them.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from codeweaver.llm.structured import message_text

Reply = str | Sequence[str] | Callable[[list[BaseMessage]], str]


def word_usage(messages: Sequence[BaseMessage], reply: str) -> UsageMetadata:
    """The scripted model's token counts: words sent in, words of the reply."""
    prompt = sum(len(message_text(m).split()) for m in messages)
    completion = len(reply.split())
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def task_of(messages: list[BaseMessage]) -> str:
    """The task name carried by the first system message, or `unknown`."""
    for message in messages:
        if message.type == "system":
            return message.name or "unknown"
    return "unknown"


class ScriptedChatModel(BaseChatModel):
    """Replies from a per-task script; raises on a task the script does not cover."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: dict[str, Reply]
    default: str | None = None

    _calls: list[tuple[str, list[BaseMessage]]] = PrivateAttr(default_factory=list)
    _turns: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "codeweaver-scripted"

    @property
    def calls(self) -> list[tuple[str, list[BaseMessage]]]:
        return list(self._calls)

    def tasks(self) -> list[str]:
        """Task names in call order."""
        return [task for task, _ in self._calls]

    def _reply(self, messages: list[BaseMessage]) -> str:
        task = task_of(messages)
        with self._lock:
            self._calls.append((task, list(messages)))
            entry = self.script.get(task)
            if entry is None:
                if self.default is None:
                    raise KeyError(f"scripted model has no reply for task {task!r}")
                return self.default
            if isinstance(entry, str):
                return entry
            if callable(entry):
                return entry(messages)
            turn = self._turns.get(task, 0)
            self._turns[task] = turn + 1
            return entry[min(turn, len(entry) - 1)]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._reply(messages)
        message = AIMessage(reply, usage_metadata=word_usage(messages, reply))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._reply(messages)
        pieces = reply.split(" ")
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            token = piece if last else piece + " "
            # Chunks' usage adds up when merged: the whole call's goes on the last one.
            usage = word_usage(messages, reply) if last else None
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token, usage_metadata=usage))
            if run_manager:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk


def _last_message_text(messages: list[BaseMessage]) -> str:
    text = message_text(messages[-1]) if messages else ""
    start, end = text.rfind("<message>"), text.rfind("</message>")
    return text[start + len("<message>") : end].strip() if 0 <= start < end else text


def echo_model(answer_seconds: float = 0.0) -> ScriptedChatModel:
    """`scripted:echo`: a fast, deterministic model for demos, UI tests and benchmarks.

    `answer_seconds` makes each answer take that long before its first token, as a real
    model computing it would (`scripted:echo@1.5s`): runs then hold their slots long
    enough for queues and replicas to be measured.
    """

    def analyze(messages: list[BaseMessage]) -> str:
        question = _last_message_text(messages)
        return json.dumps(
            {"question_type": "new_topic", "should_cache": True, "canonical_question": question}
        )

    def answer(messages: list[BaseMessage]) -> str:
        if answer_seconds:
            time.sleep(answer_seconds)  # runs in a worker thread, like a model's inference
        question = _last_message_text(messages)
        everything = "\n".join(message_text(m) for m in messages)
        cites = " [1]" if '<source n="1"' in everything else ""
        return f"Scripted answer to: {question}{cites}"

    def rewrite(messages: list[BaseMessage]) -> str:
        return json.dumps({"question": _last_message_text(messages)})

    def librarian_step(messages: list[BaseMessage]) -> str:
        # Search once with the first search tool offered, then answer.
        tools = re.findall(r"^- (search_\w+):", message_text(messages[0]), re.MULTILINE)
        if "<observation>" in message_text(messages[-1]) or not tools:
            return json.dumps({"thought": "enough to answer", "tool": "answer", "input": ""})
        question = _last_message_text(messages)
        return json.dumps({"thought": "search first", "tool": tools[0], "input": question})

    return ScriptedChatModel(
        script={
            "answer_directly": "Hello! Ask me a programming question.",
            "rewrite_question": rewrite,
            "create_plan": '{"questions": []}',
            "analyze_question": analyze,
            "classify_intent": '{"intent": "learning"}',
            "refine_search": '{"query": "python"}',
            "generate_answer": answer,
            "generate_with_history": answer,
            "librarian_step": librarian_step,
            "librarian_answer": answer,
            # The grounding check's reader: it has no opinion, so words decide.
            "check_answer": '{"unsupported": [], "answers_question": true}',
        }
    )
