"""Structured calls to an OpenAI-compatible server decode under their schema, as in process:
the client sends OpenAI's `json_schema` response format, and `codeweaver model serve`
hands it to llama.cpp in the form llama.cpp reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import llama_cpp.server.app as llama_app
import pytest
import respx
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from codeweaver.config import Settings
from codeweaver.llm.model_server import (
    OpenAIResponseFormat,
    ServedModel,
    create_model_server_app,
    llama_response_format,
)
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
    assert body["max_tokens"] == Settings().llm_max_tokens


def test_plain_openai_sends_no_schema() -> None:
    llm = create_chat_model("openai:gpt-4o", Settings(openai_api_key="sk-test"))
    assert not isinstance(llm, SchemaConstrained)


def test_openais_format_becomes_llamas_and_anything_else_is_left_alone() -> None:
    asked = {"model": ALIAS, "messages": [], "response_format": OPENAI_FORMAT}
    given = json.loads(llama_response_format(json.dumps(asked).encode()))
    assert given == {**asked, "response_format": {"type": "json_object", "schema": SCHEMA}}
    for body in (
        b"not json",
        b"[1, 2]",
        json.dumps({"messages": []}).encode(),
        json.dumps({"response_format": {"type": "json_object"}}).encode(),
        json.dumps({"response_format": {"type": "json_schema", "json_schema": "x"}}).encode(),
    ):
        assert llama_response_format(body) == body


def echo_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.body()
        return {"body": json.loads(body), "length": request.headers["content-length"]}

    @app.post("/v1/completions")
    async def other(request: Request) -> dict[str, Any]:
        return {"body": json.loads(await request.body())}

    app.add_middleware(OpenAIResponseFormat)
    return app


def test_the_middleware_rewrites_chat_requests_only() -> None:
    client = TestClient(echo_app())
    asked = {"messages": [], "response_format": OPENAI_FORMAT}
    seen = client.post("/v1/chat/completions", json=asked).json()
    assert seen["body"]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert int(seen["length"]) == len(json.dumps(seen["body"]).encode())
    untouched = client.post("/v1/completions", json=asked).json()
    assert untouched["body"] == asked


def test_the_model_server_has_the_middleware(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_app, "set_llama_proxy", lambda model_settings: None)
    app = create_model_server_app(ServedModel(ALIAS, Path("/m/q.gguf"), 4096, 2))
    assert any(m.cls is OpenAIResponseFormat for m in app.user_middleware)
