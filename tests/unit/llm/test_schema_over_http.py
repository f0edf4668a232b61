"""Structured calls to an OpenAI-compatible server decode under their schema, as in process:
the client sends OpenAI's `json_schema` response format, which llama.cpp's native server
behind `codeweaver model serve` reads as it is."""

from __future__ import annotations

import json

import httpx
import respx
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from codeweaver.config import Settings
from codeweaver.llm.registry import create_chat_model
from codeweaver.llm.structured import SchemaConstrained, ainvoke_structured
from tests.unit.llm.test_model_server import ALIAS, BASE, COMPLETION


class Colour(BaseModel):
    colour: str


SCHEMA = Colour.model_json_schema()
OPENAI_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
}


async def test_a_structured_call_sends_the_schema_and_keeps_max_tokens(
    openai_api: respx.MockRouter,
) -> None:
    reply = json.loads(json.dumps(COMPLETION))  # llama.cpp's recorded reply, new content
    reply["choices"][0]["message"]["content"] = '{"colour": "blue"}'
    route = openai_api.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(200, json=reply)
    )
    llm = create_chat_model(f"openai:{ALIAS}", Settings(openai_base_url=BASE))
    assert isinstance(llm, SchemaConstrained)
    messages = [SystemMessage("Name the colour."), HumanMessage("The sky?")]
    result = await ainvoke_structured(llm, messages, Colour, Colour(colour="?"))
    assert result.ok and result.value == Colour(colour="blue")
    body = json.loads(route.calls.last.request.content)
    assert body["response_format"] == OPENAI_FORMAT
    assert body["max_tokens"] == Settings().max_tokens


def test_plain_openai_sends_no_schema() -> None:
    llm = create_chat_model("openai:gpt-4o", Settings(openai_api_key="sk-test"))
    assert not isinstance(llm, SchemaConstrained)
