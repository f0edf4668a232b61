"""The guard of `codeweaver model serve`, in process: schemas llama.cpp would read are
bounded, bodies nested too deep are refused, CodeWeaver's own structured calls pass (the
server process under abuse: `tests/e2e/llm/test_model_server_abuse.py`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from codeweaver.agent.answering.grounding import JudgeOut
from codeweaver.agent.librarian.protocol import Decision
from codeweaver.agent.nodes.analyze import CanonicalOut
from codeweaver.agent.nodes.plan import PlanOut
from codeweaver.agent.nodes.route import RewriteOut
from codeweaver.agent.nodes.search import RefineOut
from codeweaver.llm.compatible import json_schema_format
from codeweaver.llm.local import LocalChatModel
from codeweaver.llm.model_server import (
    MAX_BODY_DEPTH,
    MAX_SCHEMA_REFS,
    ServedModel,
    create_model_server_app,
)
from codeweaver_eval.intent import IntentOut

ALIAS = "tiny"
KEY = "k" * 24
CHAT = {"model": ALIAS, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
MB = 1024 * 1024


def refused_as_openai_does(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and isinstance(error["type"], str)
    message: str = error["message"]
    return message


def nested_objects(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


# --- the guard's schema checks, in process --------------------------------------------------


def guard(seen: list[httpx.Request]) -> TestClient:
    def native(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"choices": []})

    upstream = httpx.AsyncClient(base_url="http://native", transport=httpx.MockTransport(native))
    model = ServedModel(ALIAS, Path("/m/tiny.gguf"), 512, 1, slots=1)
    return TestClient(create_model_server_app(model, upstream))


def ref_chain(length: int) -> dict[str, Any]:
    defs: dict[str, Any] = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(length)}
    defs[f"a{length}"] = {"type": "string"}
    return {"$ref": "#/$defs/a0", "$defs": defs}


def tool(parameters: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "parameters": parameters}}]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"tools": tool({"type": "array", "maxItems": 2000})}, "repetition bound"),
        ({"response_format": schema_format(ref_chain(MAX_SCHEMA_REFS))}, "$ref"),
        ({"response_format": schema_format({"maxItems": 2000.0})}, "repetition bound"),
        ({"grammar_triggers": [{"type": 2, "value": "x"}]}, "grammar"),
    ],
    ids=["tool-maxItems", "ref-chain", "float-bound", "grammar-trigger"],
)
def test_schemas_everywhere_llama_cpp_reads_one_are_bounded(
    extra: dict[str, Any], said: str
) -> None:
    seen: list[httpx.Request] = []
    refused = guard(seen).post("/v1/chat/completions", json={**CHAT, **extra})
    assert refused.status_code == 400 and said in refused.json()["error"]["message"]
    assert seen == []


def nested_lists(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_json_nested_up_to_the_limit_passes_and_one_level_more_is_refused() -> None:
    seen: list[httpx.Request] = []
    client = guard(seen)
    # The body is the first level: its field holds the rest.
    deepest = {**CHAT, "stop": nested_lists(MAX_BODY_DEPTH - 1)}
    assert client.post("/v1/chat/completions", json=deepest).status_code == 200
    over = {**CHAT, "stop": nested_lists(MAX_BODY_DEPTH)}
    refused = client.post("/v1/chat/completions", json=over)
    assert refused.status_code == 400 and "nested deeper" in refused.json()["error"]["message"]
    assert len(seen) == 1


def test_a_number_past_pythons_digit_limit_is_judged_not_waved_through() -> None:
    # Python's int() refuses 5 000 digits; llama.cpp reads them. Once, such a body passed
    # unchecked, and its schema with it.
    seen: list[httpx.Request] = []
    bound = "9" * 5000
    body = (
        '{"model": "tiny", "messages": [], "response_format": {"type": "json_schema", '
        f'"json_schema": {{"schema": {{"type": "array", "maxItems": {bound}}}}}}}}}'
    )
    refused = guard(seen).post("/v1/chat/completions", content=body.encode())
    assert refused.status_code == 400 and "repetition bound" in refused.json()["error"]["message"]
    assert seen == []


SchemaKwargs = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.mark.parametrize(
    "schema_kwargs",
    [
        lambda schema: {"response_format": json_schema_format(schema)},  # openai: over HTTP
        LocalChatModel(model_path=Path("/m/tiny.gguf")).schema_kwargs,  # local: in process
    ],
    ids=["openai", "local"],
)
@pytest.mark.parametrize(
    "model",
    [JudgeOut, Decision, CanonicalOut, PlanOut, RewriteOut, IntentOut, RefineOut],
    ids=lambda m: m.__name__,
)
def test_codeweavers_own_structured_calls_pass(
    schema_kwargs: SchemaKwargs, model: type[BaseModel]
) -> None:
    seen: list[httpx.Request] = []
    body = {**CHAT, **schema_kwargs(model.model_json_schema())}
    assert guard(seen).post("/v1/chat/completions", json=body).status_code == 200
    assert json.loads(seen[0].content) == body
