"""OpenTelemetry tracing (the `otel` extra): spans of one answer reach an OTLP/HTTP receiver,
none carries the question, and nothing is set up or sent unless an endpoint is set."""

from __future__ import annotations

import gzip
import json
import logging
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from typer.testing import CliRunner

from codeweaver import telemetry
from codeweaver.agent.runner import Assistant
from codeweaver.cli.app import app
from codeweaver.llm.scripted import Reply
from codeweaver.sources.base import SourceError
from tests.fakes import FakeSource, doc, make_deps

# A debugging question naming a function of the user's code, so `local_code` is searched.
QUESTION = "Why does read_lines() fail with FileNotFoundError?"
# Words of the question no span name or attribute may hold (the text is private).
PRIVATE_WORDS = ("read_lines", "FileNotFoundError", "fail with")


@dataclass
class Span:
    name: str
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


class Receiver:
    """An OTLP/HTTP trace receiver on loopback: keeps every span posted to /v1/traces."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    receiver.collect(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: pytest shows what matters

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def collect(self, request: ExportTraceServiceRequest) -> None:
        self.requests += 1
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    attributes = {a.key: _value(a.value) for a in s.attributes}
                    self.spans.append(
                        Span(s.name, s.trace_id, s.span_id, s.parent_span_id, attributes, resource)
                    )

    def named(self, prefix: str) -> list[Span]:
        return [s for s in self.spans if s.name.startswith(prefix)]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    served = Receiver()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


@pytest.fixture(autouse=True)
def fresh_telemetry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No OTEL_* variable of the machine's, and tracing decided anew by each test."""
    for name in (
        *telemetry.ENDPOINT_VARIABLES,
        *telemetry.PROTOCOL_VARIABLES,
        "OTEL_SDK_DISABLED",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_TRACES_SAMPLER",
    ):
        monkeypatch.delenv(name, raising=False)
    telemetry.shutdown()
    yield
    telemetry.shutdown()


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "lines.py").write_text("def read_lines(path):\n    return open(path).readlines()\n")
    values = {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        # Offline and fast: the user's code, one file.
        "CODEWEAVER_SOURCES": "local_code",
        "CODEWEAVER_CODE_PATHS": str(code),
        "CODEWEAVER_PROJECT": str(tmp_path),
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)  # no stray .env


def _leaks(span: Span) -> list[str]:
    texts = [span.name, *(json.dumps(v) for v in span.attributes.values())]
    return [w for w in PRIVATE_WORDS for t in texts if w.lower() in t.lower()]


def test_ask_exports_one_trace_of_nodes_sources_and_model_calls(
    cli_env: None, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    result = CliRunner().invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    assert "Scripted answer to:" in json.loads(result.stdout)["answer"]

    # `ask` exported before returning: no waiting, no exit hook needed.
    spans = receiver.spans
    assert len({s.trace_id for s in spans}) == 1, [s.name for s in spans]
    [root] = receiver.named("codeweaver.answer")
    assert root.parent_id == b""
    assert root.attributes == {
        "codeweaver.question.length": len(QUESTION),
        "codeweaver.question.language": "en",
        "codeweaver.mode": "pipeline",
        "codeweaver.plan_case": "single_topic",
    }
    assert root.resource["service.name"] == "codeweaver"

    by_id = {s.span_id: s for s in spans}
    nodes = {s.name for s in receiver.named("node ")}
    assert {"node create_plan", "node search_local_code", "node generate_answer"} <= nodes
    # The search subgraph's nodes sit inside its node's span.
    [inner] = receiver.named("node filter_and_score")
    assert by_id[inner.parent_id].name == "node search_subgraph"

    # One call per form of the query, each inside the node that searched.
    sources = receiver.named("source ")
    assert {s.name for s in sources} == {"source local_code"}
    assert {by_id[s.parent_id].name for s in sources} == {"node search_local_code"}
    assert max(s.attributes["codeweaver.source.result_count"] for s in sources) == 1
    assert all(s.attributes["codeweaver.source.query_length"] > 0 for s in sources)
    assert not any("codeweaver.source.failure" in s.attributes for s in sources)

    chats = receiver.named("chat ")
    assert chats
    answer_call = next(c for c in chats if by_id[c.parent_id].name == "node generate_answer")
    assert answer_call.attributes["gen_ai.request.model"]
    assert answer_call.attributes["gen_ai.usage.input_tokens"] > 0
    assert answer_call.attributes["gen_ai.usage.output_tokens"] > 0

    assert all(s.parent_id in by_id for s in spans if s is not root)
    assert {s.name: _leaks(s) for s in spans if _leaks(s)} == {}


async def test_a_failed_source_span_says_how_not_why(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"{receiver.url}/v1/traces")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "helpdesk")
    broken = FakeSource("stackoverflow", error=SourceError("HTTP 503 for q=secret-term"))
    slow = FakeSource("github", delay=5.0)
    docs = FakeSource("installed_docs", [doc(7, text="Catch the KeyError with try/except. " * 3)])
    script: dict[str, Reply] = {
        "classify_intent": '{"intent": "debugging"}',
        "generate_answer": "Catch it [1].",
    }
    deps, _ = make_deps(tmp_path, script, [broken, slow, docs])
    deps.source_timeout = 0.2
    await Assistant(deps).ask("Why does my dict lookup raise KeyError?")
    telemetry.flush()

    def failures(source: str) -> set[tuple[str, str]]:
        spans = receiver.named(f"source {source}")
        assert spans, source
        return {
            (s.attributes.get("codeweaver.source.failure", ""), s.attributes.get("error.type", ""))
            for s in spans
        }

    assert failures("stackoverflow") == {("error", "SourceError")}
    assert failures("github") == {("timeout", "TimeoutError")}
    assert failures("installed_docs") == {("", "")}
    # The exception's type, never its message, which quoted the query.
    assert not any("secret-term" in json.dumps(s.attributes) for s in receiver.spans)
    assert receiver.spans[0].resource["service.name"] == "helpdesk"


def test_without_an_endpoint_nothing_is_set_up_or_sent(
    cli_env: None, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The receiver listens, but nothing names it: no provider, no request.
    monkeypatch.setenv("OTEL_SERVICE_NAME", "codeweaver")
    result = CliRunner().invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    assert not telemetry.enabled()
    assert telemetry.answer_callbacks(question_length=1, language="en", mode="pipeline") == []
    telemetry.flush()
    assert receiver.requests == 0


def test_sdk_disabled_wins_over_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "TRUE")
    assert not telemetry.enabled()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    telemetry.shutdown()  # decide again
    assert telemetry.enabled()


def test_an_endpoint_without_the_extra_says_how_to_install_it_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    # As if `pip install codeweaver` had left the extra out: these imports fail.
    for name in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http"):
        monkeypatch.setitem(sys.modules, name, None)
    with caplog.at_level(logging.WARNING, logger="codeweaver.telemetry"):
        assert telemetry.answer_callbacks(question_length=1, language="en", mode="x") == []
        assert not telemetry.enabled()
    assert [r.getMessage() for r in caplog.records] == [telemetry.INSTALL_HINT]
    assert "pip install 'codeweaver[otel]'" in telemetry.INSTALL_HINT
