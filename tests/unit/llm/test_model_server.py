"""`openai:` models on an OpenAI-compatible server, `model serve`'s app and the probe.

Responses are the ones llama-cpp-python 0.3.36's server (`codeweaver model serve`, the
Qwen2.5-Coder 1.5B model) really returned, byte for byte apart from line breaks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import llama_cpp.server.app as llama_app
import pytest
import respx
from fastapi.testclient import TestClient
from langchain_core.messages import HumanMessage, SystemMessage

from codeweaver.config import Settings
from codeweaver.llm.model_server import (
    ServedModel,
    create_model_server_app,
    llama_settings,
    served_model,
)
from codeweaver.llm.registry import NO_KEY, ModelConfigError, create_chat_model
from codeweaver.llm.remote import ModelServerInfo, aprobe_model_server, probe_model_server

BASE = "http://127.0.0.1:8001/v1"
ALIAS = "qwen2.5-coder-1.5b"
KEY = "k" * 24

COMPLETION = {
    "id": "chatcmpl-dbdcd7c5-a205-43c0-bd9f-423ededc3c88",
    "object": "chat.completion",
    "created": 1795482247,
    "model": ALIAS,
    "choices": [
        {
            "index": 0,
            "message": {"content": "Hello", "role": "assistant"},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 23, "completion_tokens": 1, "total_tokens": 24},
}
_CHUNK = '{"id": "chatcmpl-cb37327e-eb40-4d4d-84e6-1458193ab084", "model": "qwen2.5-coder-1.5b", "created": 1795482248, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": %s, "logprobs": null, "finish_reason": %s}]}'  # noqa: E501
_DELTAS = [('{"role": "assistant"}', "null"), ('{"content": "Hello"}', "null"), ("{}", '"stop"')]
STREAM = "".join(f"data: {_CHUNK % parts}\n\n" for parts in _DELTAS) + "data: [DONE]\n\n"
MODELS = {
    "object": "list",
    "data": [{"id": ALIAS, "object": "model", "owned_by": "me", "permissions": []}],
}
INFO = {"model": ALIAS, "concurrency": 1, "context": 4096}
NOT_FOUND = {"detail": "Not Found"}
BAD_KEY = {"detail": "Invalid API key"}


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

    assert reply.content == "Hello"
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] == 23
    request = route.calls.last.request
    assert request.headers["Authorization"] == f"Bearer {NO_KEY}"
    body = json.loads(request.content)
    assert body["model"] == ALIAS
    assert body["messages"][-1] == {"role": "user", "content": "Say hi."}
    # llama.cpp's server reads `max_tokens` only; without it, it writes until n_ctx.
    assert body["max_tokens"] == Settings().llm_max_tokens
    assert body["seed"] == 0 and "max_completion_tokens" not in body


def test_streaming_from_the_server_yields_its_tokens(openai_api: respx.MockRouter) -> None:
    route = openai_api.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(
            200, text=STREAM, headers={"content-type": "text/event-stream; charset=utf-8"}
        )
    )
    llm = create_chat_model(f"openai:{ALIAS}", Settings(openai_base_url=BASE))
    chunks = [chunk.content for chunk in llm.stream("Say hi.")]
    assert "".join(str(c) for c in chunks) == "Hello"
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
    served = served_model(f"local:{weights}", Settings(llm_context=2048, llm_threads=0))
    assert served == ServedModel("my-coder.Q4", weights, 2048, max(1, os.cpu_count() or 1))


def test_llama_settings_queue_requests_and_ignore_bare_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pydantic-settings would read these bare names into llama's settings.
    for name, value in {"API_KEY": "theirs", "ROOT_PATH": "/x", "CACHE": "1", "N_CTX": "9"}.items():
        monkeypatch.setenv(name, value)
    server, llama = llama_settings(ServedModel(ALIAS, Path("/m/q.gguf"), 4096, 3))
    assert server.api_key is None and server.root_path == "" and llama.cache is False
    assert server.interrupt_requests is False  # would cut a streaming answer short
    assert (llama.model, llama.model_alias) == ("/m/q.gguf", ALIAS)
    assert (llama.n_ctx, llama.n_threads, llama.n_threads_batch) == (4096, 3, 3)
    assert llama.chat_format is None  # the GGUF's own template, as in-process
    assert llama.logits_all is False and llama.verbose is False


@pytest.fixture
def app_without_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real app, minus loading the weights: it has its own integration test.
    monkeypatch.setattr(llama_app, "set_llama_proxy", lambda model_settings: None)


@pytest.mark.usefixtures("app_without_model")
def test_the_info_route_tells_model_concurrency_and_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONFIG_FILE", "/nowhere/config.yaml")  # would replace our settings
    app = create_model_server_app(ServedModel(ALIAS, Path("/m/q.gguf"), 4096, 2))
    response = TestClient(app).get("/codeweaver/model")
    assert response.status_code == 200
    assert response.json() == INFO


@pytest.mark.usefixtures("app_without_model")
def test_the_info_route_wants_the_key_like_the_openai_routes() -> None:
    app = create_model_server_app(ServedModel(ALIAS, Path("/m/q.gguf"), 8192, 2), KEY)
    client = TestClient(app)
    assert client.get("/codeweaver/model").status_code == 401
    assert client.get("/v1/models").json() == BAD_KEY
    good = client.get("/codeweaver/model", headers={"Authorization": f"Bearer {KEY}"})
    assert good.json() == {**INFO, "context": 8192}


# --- probing a server ---------------------------------------------------------------------


def test_probe_reads_our_route_without_waiting_behind_a_completion(
    api: respx.MockRouter,
) -> None:
    api.get("http://127.0.0.1:8001/codeweaver/model").mock(
        return_value=httpx.Response(200, json=INFO)
    )
    models = api.get(f"{BASE}/models").mock(return_value=httpx.Response(200, json=MODELS))
    info = probe_model_server(BASE)
    assert info == ModelServerInfo(reachable=True, models=[ALIAS], concurrency=1)
    # llama's /v1/models holds the model lock: a busy server would look dead.
    assert not models.called


def test_probe_of_another_server_lists_its_models_without_concurrency(
    api: respx.MockRouter,
) -> None:
    # A plain `python -m llama_cpp.server`: no route of ours, the standard /models.
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
