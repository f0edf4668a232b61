"""Count what a chat model is asked: calls, prompt and completion tokens.

`UsageMeter` is a LangChain callback handler, so it works with every provider: attach it
to a model (`meter.attach(llm)`) and each finished call adds its usage; or put it in a
run's config (`{"callbacks": [meter]}`), which LangChain hands down to every call the run
makes, so it counts that run's calls and no other's. Token counts come
from the message's `usage_metadata` (the local model fills it on both paths, invoke and
stream); a provider that reports none counts as zero tokens, never as a missing call.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from codeweaver.vocabulary import Usage

__all__ = ["Usage", "UsageMeter", "reported_tokens"]


def reported_tokens(message: BaseMessage) -> tuple[int, int] | None:
    """Prompt and completion tokens as the provider reported them, None if it did not."""
    usage = getattr(message, "usage_metadata", None) or {}
    if usage:
        return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    legacy = message.response_metadata.get("usage") or message.response_metadata.get("token_usage")
    if isinstance(legacy, dict):
        return int(legacy.get("prompt_tokens", 0)), int(legacy.get("completion_tokens", 0))
    return None


def _tokens(message: BaseMessage) -> tuple[int, int]:
    return reported_tokens(message) or (0, 0)


class UsageMeter(BaseCallbackHandler):
    """Running totals of every call of the models it is attached to (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls = 0
        self._prompt = 0
        self._completion = 0

    def attach(self, llm: BaseChatModel) -> None:
        """Count `llm`'s calls from now on, next to its other callbacks."""
        current = llm.callbacks
        handlers = list(current) if isinstance(current, list) else []
        if self not in handlers:
            llm.callbacks = [*handlers, self]

    def snapshot(self) -> Usage:
        with self._lock:
            return Usage(self._calls, self._prompt, self._completion)

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        prompt = completion = 0
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration):
                    p, c = _tokens(generation.message)
                    prompt, completion = prompt + p, completion + c
        with self._lock:
            self._calls += 1
            self._prompt += prompt
            self._completion += completion
