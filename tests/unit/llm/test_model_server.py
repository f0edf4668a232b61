"""`openai:` models on an OpenAI-compatible server, `model serve`'s guard and the probe.

Responses are the ones llama.cpp's native server (xllamacpp 2026.10.11549, `codeweaver model
serve`, the Qwen2.5-Coder 1.5B model) really returned, byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from langchain_core.messages import HumanMessage, SystemMessage
from starlette.testclient import TestClient

from codeweaver.config import Settings
from codeweaver.llm.model_server import (
    MAX_BODY_BYTES,
    ServedModel,
    create_model_server_app,
    served_model,
)
from codeweaver.llm.registry import NO_KEY, ModelConfigError, create_chat_model
from codeweaver.llm.remote import ModelServerInfo, aprobe_model_server, probe_model_server

BASE = "http://127.0.0.1:8001/v1"
ALIAS = "qwen2.5-coder-1.5b"
KEY = "k" * 24
RECORDED = Path(__file__).parents[2] / "fixtures" / "native_server"

COMPLETION = json.loads((RECORDED / "completion.json").read_text())
STREAM = (RECORDED / "stream.txt").read_text()
MODELS = json.loads((RECORDED / "models.json").read_text())
BAD_KEY = json.loads((RECORDED / "bad_key.json").read_text())
GRAMMAR_REFUSED = json.loads((RECORDED / "grammar_refused.json").read_text())
INFO = {"model": ALIAS, "concurrency": 4, "context": 4096}
NOT_FOUND = {"detail": "Not Found"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEWEAVER_MODEL", "CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


# --- the `openai` provider on a base URL ------------------------------------------------


def test_base_url_reaches_the_server_with_the_model_and_no_real_key(
    openai_api: respx.MockRouter,
) -> None:
    route = openai_api.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(200, json=COMPLETION)
    )
    llm = create_chat_model(f"openai:{ALIAS}", Settings(openai_base_url=BASE))
    reply = llm.invoke([SystemMessage("You are concise."), HumanMessage("Say hi.")])

    assert reply.content == "Hello! How can I"
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] == 20
    request = route.calls.last.request
    assert request.headers["Authorization"] == f"Bearer {NO_KEY}"
    body = json.loads(request.content)
    assert body["model"] == ALIAS
    assert body["messages"][-1] == {"role": "user", "content": "Say hi."}
    # llama.cpp's server reads `max_tokens` only; without it, it writes until n_ctx.
    assert body["max_tokens"] == Settings().max_tokens
    assert body["seed"] == 0 and "max_completion_tokens" not in body


def test_streaming_from_the_server_yields_its_tokens(openai_api: respx.MockRouter) -> None:
    route = openai_api.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(
            200, text=STREAM, headers={"content-type": "text/event-stream; charset=utf-8"}
        )
    )
    llm = create_chat_model(f"openai:{ALIAS}", Settings(openai_base_url=BASE))
    chunks = [chunk.content for chunk in llm.stream("Say hi.")]
    assert "".join(str(c) for c in chunks) == "Hello! How can I"
    assert json.loads(route.calls.last.request.content)["stream"] is True


def test_a_key_when_set_is_sent_to_the_server(openai_api: respx.MockRouter) -> None:
    route = openai_api.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(200, json=COMPLETION)
    )
    settings = Settings(openai_base_url=BASE, openai_api_key=KEY)
    create_chat_model(f"openai:{ALIAS}", settings).invoke("Say hi.")
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {KEY}"


def test_without_a_base_url_the_key_stays_required() -> None:
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY is not set"):
        create_chat_model("openai:gpt-4o", Settings())
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY is not set"):
        create_chat_model("openai:gpt-4o", Settings(openai_base_url="  "))


# --- the served model and its app --------------------------------------------------------


def test_only_local_models_are_served() -> None:
    with pytest.raises(ModelConfigError, match="runs a local model"):
        served_model("openai:gpt-4o", Settings())
    with pytest.raises(ModelConfigError, match="unknown local model"):
        served_model("local:llama-70b", Settings())


def test_a_gguf_path_is_served_under_its_file_name(tmp_path: Path) -> None:
    weights = tmp_path / "my-coder.Q4.gguf"
    weights.write_bytes(b"GGUF")
    settings = Settings(llm_context=2048, llm_threads=0, model_server_slots=3)
    served = served_model(f"local:{weights}", settings)
    assert served == ServedModel("my-coder.Q4", weights, 2048, max(1, os.cpu_count() or 1), 3)
    runtime = served.runtime()
    assert (runtime.context, runtime.slots, runtime.alias) == (2048, 3, "my-coder.Q4")


# --- the guard in front of the native server ---------------------------------------------


def native(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    """The client the guard forwards with, to a stand-in for the native server."""
    return httpx.AsyncClient(
        base_url="http://127.0.0.1:40001",
        headers={"Authorization": "Bearer private-key"},
        transport=httpx.MockTransport(handler),
    )


def recorded_server(seen: list[httpx.Request]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("authorization") != "Bearer private-key":
            return httpx.Response(401, json=BAD_KEY)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=MODELS)
        body = json.loads(request.content)
        if body.get("stream"):
            headers = {"content-type": "text/event-stream"}
            return httpx.Response(200, text=STREAM, headers=headers)
        return httpx.Response(200, json=COMPLETION)

    return handle


def guard(seen: list[httpx.Request], key: str | None = None, context: int = 4096) -> TestClient:
    model = ServedModel(ALIAS, Path("/m/q.gguf"), context, 2, slots=4)
    return TestClient(create_model_server_app(model, native(recorded_server(seen)), key))


CHAT = {"model": ALIAS, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 5}


def test_the_info_route_tells_model_slots_and_context() -> None:
    seen: list[httpx.Request] = []
    response = guard(seen).get("/codeweaver/model")
    assert response.status_code == 200 and response.json() == INFO
    assert seen == []  # answered without asking the native server


def test_the_guard_wants_the_clients_key_and_sends_its_own() -> None:
    seen: list[httpx.Request] = []
    client = guard(seen, KEY, context=8192)
    assert client.get("/codeweaver/model").status_code == 401
    refused = client.post("/v1/chat/completions", json=CHAT)
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
    wrong = client.get("/v1/models", headers={"Authorization": "Bearer " + "x" * 24})
    assert wrong.status_code == 401
    assert seen == []
    good = {"Authorization": f"Bearer {KEY}"}
    assert client.get("/codeweaver/model", headers=good).json() == {**INFO, "context": 8192}
    assert client.get("/v1/models", headers=good).json() == MODELS
    # The native server gets its private key, never the client's.
    assert [r.headers["authorization"] for r in seen] == ["Bearer private-key"]


def test_answers_and_streams_pass_through_unchanged() -> None:
    seen: list[httpx.Request] = []
    client = guard(seen)
    answer = client.post("/v1/chat/completions", json=CHAT)
    assert answer.status_code == 200 and answer.json() == COMPLETION
    with client.stream("POST", "/v1/chat/completions", json={**CHAT, "stream": True}) as streamed:
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert "".join(streamed.iter_text()) == STREAM
    assert json.loads(seen[0].content) == CHAT
    assert seen[1].url.path == "/v1/chat/completions"


def test_openais_schema_format_reaches_llama_cpp_as_sent() -> None:
    seen: list[httpx.Request] = []
    schema = {"type": "object", "properties": {"colour": {"type": "string"}}}
    asked = {**CHAT, "response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    assert guard(seen).post("/v1/chat/completions", json=asked).status_code == 200
    assert json.loads(seen[0].content) == asked


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}, "maxItems": 2000},
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5000}}},
        {"anyOf": [{"type": "array", "minItems": 1001}]},
    ],
)
def test_a_schema_with_huge_repetitions_is_refused_before_llama_cpp(schema: Any) -> None:
    seen: list[httpx.Request] = []
    client = guard(seen)
    for response_format in (
        {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}},
        {"type": "json_object", "schema": schema},
    ):
        refused = client.post(
            "/v1/chat/completions", json={**CHAT, "response_format": response_format}
        )
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["type"] == "invalid_request_error" and "repetition bound" in error["message"]
    assert seen == []
    assert client.post("/v1/chat/completions", json=CHAT).status_code == 200  # still serving


def test_a_body_too_big_is_refused_whole_or_streamed() -> None:
    seen: list[httpx.Request] = []
    client = guard(seen)
    huge = {**CHAT, "messages": [{"role": "user", "content": "x" * (MAX_BODY_BYTES + 1)}]}
    refused = client.post("/v1/chat/completions", json=huge)
    assert refused.status_code == 413 and "request body over" in refused.json()["error"]["message"]

    def chunks() -> Any:  # no Content-Length: counted as it arrives
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 1):
            yield b"x" * 65536
        yield b'"}]}'

    streamed = client.post("/v1/chat/completions", content=chunks())
    assert streamed.status_code == 413
    assert seen == []


def test_what_llama_cpp_refuses_reaches_the_client_as_it_said() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json=GRAMMAR_REFUSED)

    model = ServedModel(ALIAS, Path("/m/q.gguf"), 4096, 2, slots=4)
    client = TestClient(create_model_server_app(model, native(refuse)))
    bad = client.post("/v1/chat/completions", content=b"{not json")
    assert bad.status_code == 400 and bad.json() == GRAMMAR_REFUSED


# --- probing a server ---------------------------------------------------------------------


def test_probe_reads_our_route_first(
    api: respx.MockRouter,
) -> None:
    api.get("http://127.0.0.1:8001/codeweaver/model").mock(
        return_value=httpx.Response(200, json=INFO)
    )
    models = api.get(f"{BASE}/models").mock(return_value=httpx.Response(200, json=MODELS))
    info = probe_model_server(BASE)
    assert info == ModelServerInfo(reachable=True, models=[ALIAS], concurrency=4)
    assert not models.called


def test_probe_of_another_server_lists_its_models_without_concurrency(
    api: respx.MockRouter,
) -> None:
    # A plain llama.cpp `llama-server`: no route of ours, the standard /models.
    api.get("http://127.0.0.1:8001/codeweaver/model").mock(
        return_value=httpx.Response(404, json=NOT_FOUND)
    )
    api.get(f"{BASE}/models").mock(return_value=httpx.Response(200, json=MODELS))
    info = probe_model_server(BASE + "/")
    assert info == ModelServerInfo(reachable=True, models=[ALIAS], concurrency=None)


def test_probe_sends_the_key_and_says_when_it_is_refused(api: respx.MockRouter) -> None:
    route = api.get("http://127.0.0.1:8001/codeweaver/model").mock(
        return_value=httpx.Response(401, json=BAD_KEY)
    )
    info = probe_model_server(BASE, api_key="wrong-key-value")
    assert not info.reachable and info.models == []
    assert info.error is not None and "401" in info.error and "wrong-key" not in info.error
    assert route.calls.last.request.headers["Authorization"] == "Bearer wrong-key-value"


def test_probe_of_nothing_listening_is_unreachable(api: respx.MockRouter) -> None:
    api.get(url__startswith="http://127.0.0.1:9/").mock(
        side_effect=httpx.ConnectError("[Errno 111] Connection refused")
    )
    info = probe_model_server("http://user:s3cret@127.0.0.1:9/v1")
    assert info == ModelServerInfo(
        reachable=False, error="cannot connect (nothing listening, or the host is unknown)"
    )


def test_probe_of_a_silent_server_times_out(api: respx.MockRouter) -> None:
    api.get(url__startswith="http://10.0.0.5:8001/").mock(
        side_effect=httpx.ConnectTimeout("timed out")
    )
    info = probe_model_server("http://10.0.0.5:8001/v1", timeout=0.5)
    assert info == ModelServerInfo(reachable=False, error="no answer within 0.5 s")


def test_probe_of_something_else_is_not_a_model_server(api: respx.MockRouter) -> None:
    api.get(url__startswith="http://127.0.0.1:8000/").mock(
        return_value=httpx.Response(404, json=NOT_FOUND)
    )
    info = probe_model_server("http://127.0.0.1:8000/v1")
    assert info == ModelServerInfo(reachable=False, error="HTTP 404 from GET /models")


def test_probe_of_a_bad_url_never_raises() -> None:
    assert probe_model_server("127.0.0.1:8001/v1").error == "not a valid http(s) URL"


async def test_async_probe_answers_the_same(api: respx.MockRouter) -> None:
    api.get("http://127.0.0.1:8001/codeweaver/model").mock(
        return_value=httpx.Response(404, json=NOT_FOUND)
    )
    api.get(f"{BASE}/models").mock(return_value=httpx.Response(200, json=MODELS))
    info = await aprobe_model_server(BASE)
    assert info == ModelServerInfo(reachable=True, models=[ALIAS])
