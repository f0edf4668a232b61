"""A LangChain chat model over llama.cpp for local GGUF weights.

One `Llama` instance is not safe to call from two threads, and the multi-question
graph runs workers concurrently, so every call holds the instance's lock; calls queue
instead of crashing. Streaming yields tokens as llama.cpp decodes them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from numpy.typing import NDArray
from pydantic import ConfigDict, PrivateAttr

from codeweaver.llm.scripts import Script, writes_script

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _to_llama_messages(messages: list[BaseMessage]) -> list[dict[str, str]]:
    from codeweaver.llm.structured import message_text

    return [{"role": _ROLES.get(m.type, "user"), "content": message_text(m)} for m in messages]


class LocalChatModel(BaseChatModel):
    """Chat model backed by `llama_cpp.Llama`, loaded lazily on first use."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: Path
    model_name: str = "local"
    n_ctx: int = 4096
    n_threads: int = 0
    temperature: float = 0.1
    max_tokens: int = 700
    repeat_penalty: float = 1.1

    _llama: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _banned: dict[tuple[str, ...], NDArray[np.intp]] = PrivateAttr(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "codeweaver-llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "n_ctx": self.n_ctx}

    def _model(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama

            threads = self.n_threads or max(1, os.cpu_count() or 1)
            self._llama = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        return self._llama

    def _params(self, stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": kwargs.get("temperature", self.temperature),
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "seed": kwargs.get("seed", 0),
            # Small models loop on one sentence without it, especially in Korean.
            "repeat_penalty": kwargs.get("repeat_penalty", self.repeat_penalty),
        }
        if stop:
            params["stop"] = stop
        if kwargs.get("response_format"):
            params["response_format"] = kwargs["response_format"]
        if kwargs.get("logits_processor"):
            params["logits_processor"] = kwargs["logits_processor"]
        return params

    def script_kwargs(self, avoid: frozenset[Script]) -> dict[str, Any]:
        """Call arguments that stop llama.cpp from decoding tokens of the `avoid` scripts."""
        if not avoid:
            return {}
        from llama_cpp import LogitsProcessorList

        def ban(_input_ids: NDArray[np.intc], scores: NDArray[np.single]) -> NDArray[np.single]:
            # Runs inside the call, under the model's lock: never take the lock on the
            # event loop, where a streaming call's callbacks may be waiting for it.
            scores[self._banned_tokens(avoid)] = -np.inf
            return scores

        return {"logits_processor": LogitsProcessorList([ban])}

    def _banned_tokens(self, avoid: frozenset[Script]) -> NDArray[np.intp]:
        """Token ids of the vocabulary that write one of `avoid` (0.3 s once per set;
        called during a call, which holds the lock)."""
        key = tuple(sorted(avoid))
        if key not in self._banned:
            llama = self._model()
            ids = [
                i
                for i in range(llama.n_vocab())
                if any(writes_script(llama.detokenize([i]), s) for s in avoid)
            ]
            self._banned[key] = np.array(ids, dtype=np.intp)
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
        with self._lock:
            reply = self._model().create_chat_completion(
                messages=_to_llama_messages(messages), **self._params(stop, kwargs)
            )
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
        with self._lock:
            llama = self._model()
            stream = llama.create_chat_completion(
                messages=_to_llama_messages(messages), stream=True, **self._params(stop, kwargs)
            )
            decoded = 0
            for part in stream:
                choice = part["choices"][0]
                text = choice["delta"].get("content") or ""
                if choice.get("finish_reason") is None and "role" not in choice["delta"]:
                    decoded += 1  # llama.cpp streams one part per decoded token
                if not text:
                    continue
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
                if run_manager:
                    run_manager.on_llm_new_token(text, chunk=chunk)
                yield chunk
            # Streaming reports no usage: the context now holds the prompt and the reply.
            prompt = max(0, int(getattr(llama, "n_tokens", 0)) - decoded)
        yield ChatGenerationChunk(
            message=AIMessageChunk(content="", usage_metadata=_usage(prompt, decoded))
        )


def _usage(prompt: int, completion: int) -> UsageMetadata:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }
