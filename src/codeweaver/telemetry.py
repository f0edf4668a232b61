"""OpenTelemetry traces of each answer: off unless asked for, with the `otel` extra.

On when the extra is installed and `OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless `OTEL_SDK_DISABLED` is true. Spans go
over OTLP/HTTP (protobuf); the SDK and its exporter read every other standard variable
themselves (headers, timeout, sampler, batch sizes, resource attributes), and the service
is `codeweaver` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names it. An
endpoint set without the extra is one warning, then nothing else changes.

One trace per answer:

- `codeweaver.answer`, the root: question length and language, mode, plan case;
- `node <name>` per graph node run, a subgraph's nodes inside the node running it;
- `source <name>` per source call (`source_span`): query length, results, failure kind;
- `chat <model>` per model call: the model, token counts when the provider reports them.

Nodes, model calls and the root come from `AnswerTracer`, a LangChain callback handler the
runner puts in the run's config, which LangChain hands down to every node and model call
of the run. Sources are no LangChain runnables, so a search node wraps each call in
`source_span`, which finds that handler in the node's config.

Spans never carry the question, a query, the answer, a prompt or an error's message (which
can quote the query or a URL holding it): those may be private (code, names, internal
hosts) and trace backends are often shared. Only lengths, counts, names and kinds.

The tracer provider is this module's own, not OpenTelemetry's global one: the global one
can be set once per process and belongs to an application embedding CodeWeaver.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables.config import var_child_runnable_config

from codeweaver.llm.usage import reported_tokens

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "INSTALL_HINT",
    "AnswerTracer",
    "SourceCall",
    "answer_callbacks",
    "enabled",
    "flush",
    "shutdown",
    "source_span",
]

logger = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
SERVICE_NAME = "codeweaver"
INSTRUMENTATION = "codeweaver"
INSTALL_HINT = (
    "tracing is off: OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set but "
    "OpenTelemetry is not installed; pip install 'codeweaver[otel]'"
)


@dataclass
class _Setup:
    provider: TracerProvider | None = None
    tracer: Tracer | None = None
    decided: bool = False


_setup = _Setup()
_setup_lock = threading.Lock()


def _wanted() -> bool:
    endpoint = any(os.environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)
    # The specification's boolean: only "true", in any case, is true.
    disabled = os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    return endpoint and not disabled


def _start() -> TracerProvider | None:
    if not _wanted():
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME as SERVICE_KEY
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(INSTALL_HINT)
        return None
    for name in PROTOCOL_VARIABLES:
        protocol = os.environ.get(name, "").strip()
        if protocol and protocol != "http/protobuf":
            logger.warning("%s=%s: CodeWeaver sends traces as http/protobuf only", name, protocol)
            break
    # `create` reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; only a service left
    # unnamed by both (the SDK's `unknown_service`) becomes `codeweaver`.
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_KEY, "unknown_service")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_KEY: SERVICE_NAME}))
    # Shut down by this module's own exit hook, which also covers a provider replaced
    # after `shutdown` (tests, several commands in one process).
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    # Batched: exporting happens off the event loop, in the processor's thread.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _tracer() -> Tracer | None:
    """The tracer, set up on first use; None when tracing is off."""
    with _setup_lock:
        if not _setup.decided:
            _setup.decided = True
            _setup.provider = _start()
            if _setup.provider is not None:
                _setup.tracer = _setup.provider.get_tracer(INSTRUMENTATION)
        return _setup.tracer


def enabled() -> bool:
    """Whether answers are traced (decided once, from the environment, on first use)."""
    return _tracer() is not None


def flush() -> None:
    """Export the spans still waiting in the batch, now (no-op when tracing is off)."""
    with _setup_lock:
        provider = _setup.provider
    if provider is not None:
        provider.force_flush()


@atexit.register
def shutdown() -> None:
    """Export what is left and stop; the next use decides again from the environment."""
    with _setup_lock:
        provider = _setup.provider
        _setup.provider, _setup.tracer, _setup.decided = None, None, False
    if provider is not None:
        provider.shutdown()


def answer_callbacks(
    *, question_length: int, language: str, mode: str
) -> list[BaseCallbackHandler]:
    """The callback handlers tracing one answer: none when tracing is off.

    Takes the question's length, not its text, so no span can carry the question."""
    tracer = _tracer()
    if tracer is None:
        return []
    root = {
        "codeweaver.question.length": question_length,
        "codeweaver.question.language": language,
        "codeweaver.mode": mode,
    }
    return [AnswerTracer(tracer, root)]


@dataclass
class _Run:
    """A LangChain run seen by the handler: its span if it has one, else its nearest
    ancestor's, which a model call or a source call inside it is parented to."""

    span: Span | None
    owner: Span | None
    node: str | None = None
    root: bool = False


def _failed(span: Span, error: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    # The exception's type only: its message can quote the query or a URL holding it.
    span.set_attribute("error.type", type(error).__name__)
    span.set_status(Status(StatusCode.ERROR))


def _model_name(serialized: dict[str, Any] | None, metadata: dict[str, Any], params: Any) -> str:
    params = params if isinstance(params, dict) else {}
    candidates = (
        metadata.get("ls_model_name"),
        params.get("model"),
        params.get("model_name"),
        params.get("_type"),
        (serialized or {}).get("name"),
    )
    return next((c for c in candidates if isinstance(c, str) and c), "unknown")


class AnswerTracer(BaseCallbackHandler):
    """Spans of one answer's run: the root, each graph node and each model call."""

    # Called on the event loop, in order, not handed to a worker thread as LangChain does
    # with a sync handler: a node's span exists before its model and source calls start.
    run_inline = True

    def __init__(self, tracer: Tracer, root_attributes: dict[str, Any]) -> None:
        self._tracer = tracer
        self._root_attributes = root_attributes
        self._runs: dict[UUID, _Run] = {}
        self._root: Span | None = None
        self._lock = threading.Lock()

    def owner_of(self, run_id: UUID | None) -> Span | None:
        """The span a call made inside the run `run_id` belongs under: the root when that
        run is unknown (a kind of run not followed here), so the answer stays one trace."""
        with self._lock:
            run = self._runs.get(run_id) if run_id is not None else None
            return run.owner if run is not None and run.owner is not None else self._root

    def start_span(self, name: str, parent: Span | None, attributes: dict[str, Any]) -> Span:
        from opentelemetry.trace import SpanKind, set_span_in_context

        context: Context | None = None if parent is None else set_span_in_context(parent)
        kind = SpanKind.CLIENT if name.startswith(("chat ", "source ")) else SpanKind.INTERNAL
        return self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            parent = self._runs.get(parent_run_id) if parent_run_id is not None else None
        name = kwargs.get("name")
        node = (metadata or {}).get("langgraph_node")
        if parent_run_id is None:  # the graph itself
            span = self.start_span("codeweaver.answer", None, self._root_attributes)
            run = _Run(span, span, root=True)
            self._root = span
        elif parent is not None and node == name and parent.node != node:
            # A node's run is named after it; a router of its edges is not, and a subgraph
            # run inside its node repeats the node's name.
            attributes = {"langgraph.node": node}
            step = (metadata or {}).get("langgraph_step")
            if isinstance(step, int):
                attributes["langgraph.step"] = step
            span = self.start_span(f"node {node}", self.owner_of(parent_run_id), attributes)
            run = _Run(span, span, node)
        else:  # a router, a runnable inside a node: counted in its nearest span
            owner = self.owner_of(parent_run_id)
            run = _Run(None, owner, parent.node if parent is not None else None)
        with self._lock:
            self._runs[run_id] = run

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
        if run is None or run.span is None:
            return
        if run.root and isinstance(outputs, dict):
            plan_case = outputs.get("plan_case")
            if isinstance(plan_case, str):
                run.span.set_attribute("codeweaver.plan_case", plan_case)
        run.span.end()

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
        if run is not None and run.span is not None:
            _failed(run.span, error)
            run.span.end()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        model = _model_name(serialized, metadata or {}, kwargs.get("invocation_params"))
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        provider = (metadata or {}).get("ls_provider")
        if isinstance(provider, str):
            attributes["gen_ai.provider.name"] = provider
        parent = self.owner_of(parent_run_id)
        span = self.start_span(f"chat {model}", parent, attributes)
        with self._lock:
            self._runs[run_id] = _Run(span, span)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
        if run is None or run.span is None:
            return
        reported = [
            tokens
            for generations in response.generations
            for generation in generations
            if isinstance(generation, ChatGeneration)
            and (tokens := reported_tokens(generation.message)) is not None
        ]
        if reported:  # a provider that reports nothing leaves the counts out, not at zero
            run.span.set_attribute("gen_ai.usage.input_tokens", sum(p for p, _ in reported))
            run.span.set_attribute("gen_ai.usage.output_tokens", sum(c for _, c in reported))
        run.span.end()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.on_chain_error(error, run_id=run_id)


class SourceCall:
    """What a source call found, set on its span (nothing when tracing is off)."""

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def found(self, count: int) -> None:
        if self._span is not None:
            self._span.set_attribute("codeweaver.source.result_count", count)


def _current_tracer() -> tuple[AnswerTracer | None, UUID | None]:
    """The answer's handler and the run calling now, from LangChain's config of that run
    (set for the node and the tasks it starts), or (None, None) outside a traced run."""
    config = var_child_runnable_config.get()
    manager = (config or {}).get("callbacks")
    handlers = getattr(manager, "handlers", None) or []
    tracer = next((h for h in handlers if isinstance(h, AnswerTracer)), None)
    return tracer, getattr(manager, "parent_run_id", None)


@contextmanager
def source_span(source: str, query: str) -> Iterator[SourceCall]:
    """A span around one call of `source` inside a traced node; the query's length only.

    Failure kinds: `timeout`, `cancelled` or `error`, with the exception's type; the
    exception goes on to the caller unchanged."""
    tracer, run_id = _current_tracer()
    if tracer is None:
        yield SourceCall(None)
        return
    attributes = {"codeweaver.source.name": source, "codeweaver.source.query_length": len(query)}
    span = tracer.start_span(f"source {source}", tracer.owner_of(run_id), attributes)
    try:
        yield SourceCall(span)
    except BaseException as exc:
        span.set_attribute("codeweaver.source.failure", _failure_kind(exc))
        _failed(span, exc)
        raise
    finally:
        span.end()


def _failure_kind(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else "error"
