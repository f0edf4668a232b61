"""`codeweaver model serve` under abuse: a real server process on a tiny random-weight GGUF
(llama.cpp loads it in about a second); the guard's checks in process are
`tests/unit/llm/test_model_server_guard.py`.

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from codeweaver.llm.model_server import (
    ServedModel,
    create_model_server_app,
)
from tests.servers import free_port, running_app
from tests.tiny_gguf import write_tiny_gguf
from tests.unit.llm.test_model_server_guard import (
    ALIAS,
    CHAT,
    KEY,
    MB,
    nested_objects,
    refused_as_openai_does,
    schema_format,
)


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


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
    with running_app(app) as url:
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
