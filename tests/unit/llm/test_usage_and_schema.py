"""The usage meter, and schema-constrained decoding requested through the structured helper."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, PrivateAttr

from codeweaver.llm.local import LocalChatModel
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.llm.structured import SchemaConstrained, ainvoke_structured
from codeweaver.llm.usage import Usage, UsageMeter


class _Intent(BaseModel):
    intent: Literal["debugging", "learning", "code_review"]


class _Metered(ScriptedChatModel):
    """Reports usage like a provider does, on both the invoke and the stream path."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(
            self._reply(messages),
            usage_metadata={"input_tokens": 120, "output_tokens": 7, "total_tokens": 127},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield ChatGenerationChunk(message=AIMessageChunk(content=self._reply(messages)))
        usage = {"input_tokens": 80, "output_tokens": 3, "total_tokens": 83}
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))


class _Silent(ScriptedChatModel):
    """A provider that reports no usage at all."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._reply(messages)))])


class _Constrained(ScriptedChatModel):
    _seen: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    def schema_kwargs(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {"response_format": {"type": "json_object", "schema": schema}}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._seen.append(kwargs)
        return super()._generate(messages, stop, run_manager, **kwargs)


async def test_the_meter_counts_calls_and_tokens_on_invoke_and_stream() -> None:
    llm = _Metered(script={}, default='{"intent": "learning"}')
    meter = UsageMeter()
    meter.attach(llm)
    meter.attach(llm)  # attaching twice counts once
    start = meter.snapshot()
    await llm.ainvoke([HumanMessage("hi")])
    async for _ in llm.astream([HumanMessage("hi")]):
        pass
    assert meter.snapshot() - start == Usage(calls=2, prompt_tokens=200, completion_tokens=10)


async def test_a_provider_without_usage_still_counts_its_calls() -> None:
    llm = _Silent(script={}, default="ok")
    meter = UsageMeter()
    meter.attach(llm)
    reply = await llm.ainvoke([HumanMessage("hi")])
    assert reply.usage_metadata is None
    assert meter.snapshot() == Usage(calls=1)


async def test_the_scripted_model_counts_words_as_tokens_invoked_or_streamed() -> None:
    llm = ScriptedChatModel(script={"ask": "Use the csv module."})
    sent = [SystemMessage("Answer the question.", name="ask"), HumanMessage("How do I read CSV?")]
    reply = await llm.ainvoke(sent)
    assert reply.usage_metadata == {"input_tokens": 8, "output_tokens": 4, "total_tokens": 12}
    meter = UsageMeter()
    async for _ in llm.astream(sent, config={"callbacks": [meter]}):
        pass
    assert meter.snapshot() == Usage(calls=1, prompt_tokens=8, completion_tokens=4)


async def test_a_schema_constrained_model_is_asked_for_the_schema() -> None:
    llm = _Constrained(script={}, default='{"intent": "debugging"}')
    assert isinstance(llm, SchemaConstrained)
    result = await ainvoke_structured(
        llm, [HumanMessage("why?")], _Intent, _Intent(intent="learning")
    )
    assert result.value.intent == "debugging"
    (kwargs,) = llm._seen
    schema = kwargs["response_format"]["schema"]
    assert schema["properties"]["intent"]["enum"] == ["debugging", "learning", "code_review"]


async def test_other_models_get_no_extra_arguments() -> None:
    llm = ScriptedChatModel(script={}, default='{"intent": "learning"}')
    assert not isinstance(llm, SchemaConstrained)
    result = await ainvoke_structured(
        llm, [HumanMessage("x")], _Intent, _Intent(intent="debugging")
    )
    assert result.ok and result.value.intent == "learning"


def test_the_local_model_passes_the_schema_to_llama_cpp(tmp_path: Any) -> None:
    model = LocalChatModel(model_path=tmp_path / "m.gguf")
    extra = model.schema_kwargs({"type": "object"})
    body = model._body([HumanMessage("x")], None, extra)
    assert body["response_format"] == {"type": "json_object", "schema": {"type": "object"}}
    assert body["messages"] == [{"role": "user", "content": "x"}]
    assert "response_format" not in model._body([HumanMessage("x")], None, {})
