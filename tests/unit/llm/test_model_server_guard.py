"""`codeweaver model serve` under abuse: a real server process on a tiny random-weight GGUF
(llama.cpp loads it in about a second), and the guard's checks in process.

One request must never stop the server every replica shares: llama.cpp builds grammars by
recursion, and one deep enough kills the process (SIGSEGV). Bodies are refused on their
headers before they are read, and web pages get neither CORS nor another host's name.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from codeweaver.agent.grounding import JudgeOut
from codeweaver.agent.librarian.protocol import Decision
from codeweaver.agent.nodes.analyze import CanonicalOut
from codeweaver.agent.nodes.plan import PlanOut
from codeweaver.agent.nodes.route import RewriteOut
from codeweaver.agent.nodes.search import IntentOut, RefineOut
from codeweaver.api.background import serve_in_thread
from codeweaver.llm.compatible import json_schema_format
from codeweaver.llm.local import LocalChatModel
from codeweaver.llm.model_server import (
    MAX_BODY_DEPTH,
    MAX_SCHEMA_REFS,
    ServedModel,
    create_model_server_app,
)
from tests.tiny_gguf import write_tiny_gguf

ALIAS = "tiny"
KEY = "k" * 24
CHAT = {"model": ALIAS, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
MB = 1024 * 1024


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`codeweaver model serve` as deployed by default: loopback, no key."""
    folder = tmp_path_factory.mktemp("model-serve")
    weights = write_tiny_gguf(folder / f"{ALIAS}.gguf")
    drop = {"CODEWEAVER_MODEL_SERVER_KEY", "CODEWEAVER_ALLOWED_HOSTS", "CODEWEAVER_MODEL"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["CODEWEAVER_DATA_DIR"] = str(folder / "data")
    port = free_port()
    log = folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "codeweaver", "model", "serve", "--model", f"local:{weights}",
             "--port", str(port), "--threads", "1", "--context", "512", "--slots", "1"],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped whole below
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/v1/models", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "model server not ready in 60 s"
            time.sleep(0.2)
        yield Server(url, port, process, log)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def still_answers(server: Server) -> None:
    answer = httpx.post(f"{server.url}/v1/chat/completions", json=CHAT, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["role"] == "assistant"
    assert server.process.poll() is None


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


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


# --- N1: no request stops the server -------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        # llama.cpp cannot build this one ("exceeds sane defaults"); the previous runtime
        # then crashed.
        ({"response_format": schema_format({"type": "array", "maxItems": 2000})}, "2000"),
        # 200 KB of nested parentheses: llama.cpp's grammar parser overflows its stack.
        ({"grammar": "root ::= " + "(" * 100_000 + '"a"' + ")" * 100_000}, "grammar"),
        # Before, the guard's own walk of this schema recursed until a 500.
        ({"response_format": schema_format(nested_objects(300))}, "nested deeper"),
    ],
    ids=["maxItems-2000", "raw-grammar-100k-deep", "schema-300-deep"],
)
def test_a_grammar_llama_cpp_cannot_build_is_refused_and_the_server_answers_on(
    server: Server, extra: dict[str, Any], said: str
) -> None:
    refused = httpx.post(f"{server.url}/v1/chat/completions", json={**CHAT, **extra}, timeout=30)
    assert said in refused_as_openai_does(refused, 400)
    still_answers(server)


def test_only_the_routes_codeweaver_uses_reach_llama_cpp(server: Server) -> None:
    # /completion takes a raw grammar and a schema of its own; /slots manages the slots.
    grammar = {"prompt": "hi", "n_predict": 1, "json_schema": nested_objects(3)}
    refused_as_openai_does(httpx.post(f"{server.url}/completion", json=grammar), 404)
    refused_as_openai_does(httpx.get(f"{server.url}/slots"), 404)
    assert httpx.get(f"{server.url}/health").status_code == 200
    listed = httpx.get(f"{server.url}/v1/models").json()
    assert [m["id"] for m in listed["data"]] == [ALIAS]
    still_answers(server)


# --- N7: bodies are judged before they are read --------------------------------------------


def test_a_400_mb_body_is_refused_on_its_length_without_growing_the_server(
    server: Server,
) -> None:
    pid = server.process.pid
    before = peak = rss_mb(pid)
    watching = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not watching.is_set():
            peak = max(peak, rss_mb(pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\n"
                + f"Content-Length: {400 * MB}\r\n\r\n".encode()
                + b"a" * MB
            )
            status = sock.recv(200).split(b"\r\n")[0]  # answered with 399 MB still to come
            took = time.monotonic() - started
            try:  # what a client that keeps sending costs the server
                for _ in range(48):
                    sock.sendall(b"a" * MB)
            except OSError:
                pass  # the server closed the connection: nothing more to buffer
    finally:
        watching.set()
        watcher.join()
    assert status.split(b" ")[1] == b"413", status
    assert took < 5, took
    assert peak - before < 50, (before, peak)
    still_answers(server)


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "tiny", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b"[" * 500_000 + b"]" * 500_000,
    ],
    ids=["messages-100k-deep", "array-500k-deep"],
)
def test_a_deeply_nested_body_is_400_not_500(server: Server, body: bytes) -> None:
    reply = httpx.post(
        f"{server.url}/v1/chat/completions",
        content=body,
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert "nested deeper" in refused_as_openai_does(reply, 400)
    still_answers(server)


def test_a_body_that_is_not_json_is_400(server: Server) -> None:
    reply = httpx.post(f"{server.url}/v1/chat/completions", content=b"{not json", timeout=30)
    refused_as_openai_does(reply, 400)
    still_answers(server)


def test_with_a_key_a_400_mb_body_without_it_is_401_before_a_byte_is_read() -> None:
    seen: list[httpx.Request] = []

    def native(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    upstream = httpx.AsyncClient(base_url="http://native", transport=httpx.MockTransport(native))
    model = ServedModel(ALIAS, Path("/m/tiny.gguf"), 512, 1, slots=1)
    app = create_model_server_app(model, upstream, api_key=KEY)
    with serve_in_thread(app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            # The headers alone: a server that waited for the body would never answer.
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Content-Length: {400 * MB}\r\n\r\n".encode()
            )
            status = sock.recv(200).split(b"\r\n")[0]
    assert status.split(b" ")[1] == b"401", status
    assert seen == []


# --- N11: no web page, no foreign host -----------------------------------------------------


def test_a_web_page_gets_no_cors_grant_and_cannot_post(server: Server) -> None:
    evil = "http://evil.example"
    preflight = httpx.options(
        f"{server.url}/v1/chat/completions",
        headers={"Origin": evil, "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 403
    assert not [h for h in preflight.headers if h.lower().startswith("access-control-")]
    # A "simple" request needs no preflight: the page could drive the model unseen.
    simple = httpx.post(
        f"{server.url}/v1/chat/completions",
        content=json.dumps(CHAT),
        headers={"Origin": evil, "Content-Type": "text/plain"},
    )
    assert "web pages" in refused_as_openai_does(simple, 403)
    assert "access-control-allow-origin" not in simple.headers
    # CodeWeaver's clients send no Origin, and llama.cpp's own grant is not passed on.
    listed = httpx.get(f"{server.url}/v1/models")
    assert listed.status_code == 200
    assert not [h for h in listed.headers if h.lower().startswith("access-control-")]
    assert listed.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("host", "status"),
    [("attacker.example", 421), ("127.0.0.1.evil.example", 421), ("localhost", 200),
     ("127.0.0.1", 200)],
)  # fmt: skip
def test_the_server_answers_only_for_its_own_host_names(
    server: Server, host: str, status: int
) -> None:
    reply = httpx.get(f"{server.url}/v1/models", headers={"Host": f"{host}:{server.port}"})
    assert reply.status_code == status, reply.text


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
