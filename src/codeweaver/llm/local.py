"""A LangChain chat model over llama.cpp's native server for local GGUF weights.

The server (`llama_runtime`) is loaded on first use and decodes up to `slots` calls at
once with continuous batching, so the multi-question graph's workers answer side by side
instead of queueing on a lock. Streaming yields tokens as llama.cpp decodes them.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from codeweaver.llm.busy import computing
from codeweaver.llm.llama_runtime import (
    IN_PROCESS_SLOTS,
    LocalModelError,
    Runtime,
    reply_error,
    start_server,
)
from codeweaver.llm.scripts import Script

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
# What one streamed call hands over when it ends (the queue's last item).
_END = object()


def _to_llama_messages(messages: list[BaseMessage]) -> list[dict[str, str]]:
    from codeweaver.llm.structured import message_text

    return [{"role": _ROLES.get(m.type, "user"), "content": message_text(m)} for m in messages]


class LocalChatModel(BaseChatModel):
    """Chat model backed by llama.cpp's native server in this process, loaded lazily."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: Path
    model_name: str = "local"
    n_ctx: int = 4096
    n_threads: int = 0
    slots: int = IN_PROCESS_SLOTS
    temperature: float = 0.1
    max_tokens: int = 700
    repeat_penalty: float = 1.1
    # Where the vocabulary's banned-token lists are kept (None: beside the weights).
    cache_dir: Path | None = None

    _server: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _banned: dict[tuple[str, ...], list[int]] = PrivateAttr(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "codeweaver-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "n_ctx": self.n_ctx}

    def _model(self) -> Any:
        with self._load_lock:
            if self._server is None:
                threads = self.n_threads or max(1, os.cpu_count() or 1)
                runtime = Runtime(
                    path=self.model_path,
                    alias=self.model_name,
                    context=self.n_ctx,
                    threads=threads,
                    slots=max(1, self.slots),
                )
                self._server = start_server(runtime)
            return self._server

    def _body(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": _to_llama_messages(messages),
            "temperature": kwargs.get("temperature", self.temperature),
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "seed": kwargs.get("seed", 0),
            # Small models loop on one sentence without it, especially in Korean.
            "repeat_penalty": kwargs.get("repeat_penalty", self.repeat_penalty),
        }
        if stop:
            body["stop"] = stop
        for name in ("response_format", "logit_bias"):
            if kwargs.get(name):
                body[name] = kwargs[name]
        return body

    def script_kwargs(self, avoid: frozenset[Script]) -> dict[str, Any]:
        """Call arguments that stop llama.cpp from decoding tokens of the `avoid` scripts."""
        if not avoid:
            return {}
        banned = self._banned_tokens(avoid)
        return {"logit_bias": [[i, False] for i in banned]} if banned else {}

    def _banned_tokens(self, avoid: frozenset[Script]) -> list[int]:
        """Token ids of the vocabulary that write one of `avoid` (read once, then kept)."""
        from codeweaver.llm.vocab import script_token_ids

        key = tuple(sorted(avoid))
        if key not in self._banned:
            folder = self.cache_dir or self.model_path.parent
            ids: set[int] = set()
            for script in key:
                ids.update(script_token_ids(self.model_path, script, folder))  # type: ignore[arg-type]
            self._banned[key] = sorted(ids)
        return self._banned[key]

    def schema_kwargs(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Call arguments that make llama.cpp decode only JSON valid under `schema`."""
        return {"response_format": {"type": "json_object", "schema": schema}}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        server = self._model()
        with computing():  # background work on this machine waits meanwhile
            reply = server.handle_chat_completions(self._body(messages, stop, kwargs))
        if (error := reply_error(reply)) is not None:
            raise LocalModelError(error)
        choice = reply["choices"][0]
        usage = reply.get("usage") or {}
        message = AIMessage(
            content=choice["message"].get("content") or "",
            response_metadata={"finish_reason": choice.get("finish_reason"), "usage": usage},
            usage_metadata=_usage(
                int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
            ),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        server = self._model()
        body = {
            **self._body(messages, stop, kwargs),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        parts: queue.Queue[Any] = queue.Queue()
        stopped = threading.Event()

        def on_part(part: dict[str, Any]) -> bool:
            parts.put(part)
            return stopped.is_set()  # True: llama.cpp stops decoding this request

        def decode() -> None:
            try:
                with computing():  # background work on this machine waits meanwhile
                    server.handle_chat_completions(body, on_part)
            except BaseException as exc:  # handed to the reader, never lost in this thread
                parts.put(exc)
            parts.put(_END)

        # The call blocks until the reply ends; the tokens come through the queue meanwhile.
        worker = threading.Thread(target=decode, name="llama-stream", daemon=True)
        worker.start()
        usage = _usage(0, 0)
        try:
            while (part := parts.get()) is not _END:
                if isinstance(part, BaseException):
                    raise part
                if (error := reply_error(part)) is not None:
                    raise LocalModelError(error)
                if isinstance(part.get("usage"), dict):
                    used = part["usage"]
                    usage = _usage(
                        int(used.get("prompt_tokens", 0)), int(used.get("completion_tokens", 0))
                    )
                for choice in part.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content") or ""
                    if not text:
                        continue
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager:
                        run_manager.on_llm_new_token(text, chunk=chunk)
                    yield chunk
        finally:
            stopped.set()  # a reader that stops early frees the slot at the next token
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))


def _usage(prompt: int, completion: int) -> UsageMetadata:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }
