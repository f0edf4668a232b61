"""`/v1/responses` on a real loopback server with the scripted model: the SDK's types
parse what it sends, streams and answers agree with each other and with Chat
Completions, `previous_response_id` continues the right session, and what cannot be
honoured is refused in OpenAI's shape."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent, ResponseTextConfigParam
from pydantic import TypeAdapter

from codeweaver.api.openai_responses_schemas import response_id
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.llm.structured import message_text
from codeweaver.llm.usage import UsageMeter
from tests.e2e.api.test_openai_compat import Server, serving
from tests.fakes import FakeSource, doc

QUESTION = "How do I read a file line by line in Python?"
SOURCES_MD = (
    "**Sources**\n\n"
    "- [1] [doc 1](https://docs.example/1) — installed docs\n"
    "- Also retrieved, not cited: [2] doc 2"
)
HEADER = "X-CodeWeaver-Session"
STREAM_EVENT: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)
# The order of a stream's events, each run of deltas counted once.
ORDER = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("responses")) as running:
        yield running


def client(url: str, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30)


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/responses", json=body, headers=headers, timeout=30)


def create(url: str, **body: Any) -> tuple[str, Response]:
    """(the session, the response) of a request that does not stream."""
    raw = post(url, {"model": "codeweaver", **body})
    assert raw.status_code == 200, raw.text
    return raw.headers[HEADER], Response.model_validate(raw.json())


def streamed(url: str, **body: Any) -> tuple[str, list[dict[str, Any]]]:
    """(the session, the events) of a streamed response, each checked against the SDK's
    event union and its SSE event name."""
    request = {"model": "codeweaver", "stream": True, **body}
    events: list[dict[str, Any]] = []
    with httpx.stream("POST", f"{url}/v1/responses", json=request, timeout=30) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                event = json.loads(line[6:])
                assert event["type"] == name
                STREAM_EVENT.validate_python(event)
                events.append(event)
        return response.headers[HEADER], events


def texts(events: list[dict[str, Any]], kind: str) -> str:
    return "".join(e["delta"] for e in events if e["type"] == kind)


def history(url: str, session: str, **headers: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/api/sessions/{session}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["history"]  # type: ignore[no-any-return]


def asked(url: str, session: str) -> list[str]:
    return [m["content"] for m in history(url, session) if m["role"] == "user"]


@contextmanager
def metered(llm: ScriptedChatModel) -> Iterator[UsageMeter]:
    meter, callbacks = UsageMeter(), llm.callbacks
    meter.attach(llm)
    try:
        yield meter
    finally:
        llm.callbacks = callbacks


def test_a_response_parses_as_the_sdks_and_holds_the_chat_completions_answer(
    server: Server,
) -> None:
    url, llm = server
    with metered(llm) as meter:
        session, response = create(
            url,
            input=QUESTION,
            instructions="Be brief.",  # accepted and ignored, as system messages
            metadata={"ticket": "42"},
            store=False,
            temperature=0.2,
        )
    assert response.object == "response" and response.status == "completed"
    assert response.id.startswith("resp_") and response.id.endswith(f"_1_{session}")
    assert response.model == "codeweaver" and abs(response.created_at - time.time()) < 60
    assert response.metadata == {"ticket": "42"} and response.instructions == "Be brief."
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and message.type == "message"
    (summary,) = reasoning.summary
    assert summary.text.startswith("Understanding the question\nSearching installed docs…\n")
    (part,) = message.content
    assert message.role == "assistant" and part.type == "output_text"
    assert response.output_text == part.text
    assert part.text.startswith(f"Scripted answer to: {QUESTION}")
    assert part.text.endswith("\n\n" + SOURCES_MD)
    used = meter.snapshot()
    assert response.usage is not None and response.usage.output_tokens > 0
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        used.prompt_tokens,
        used.completion_tokens,
    )
    assert response.usage.total_tokens == used.prompt_tokens + used.completion_tokens
    assert asked(url, session) == [QUESTION]
    # Chat Completions gives the same text for the same question (a new chat).
    completion = client(url).chat.completions.create(
        model="codeweaver", messages=[{"role": "user", "content": QUESTION}]
    )
    assert completion.choices[0].message.content == response.output_text


def test_a_stream_parses_in_order_and_its_deltas_are_the_answer(server: Server) -> None:
    url, _ = server
    question = "How do I sort a list of tuples by the second item in Python?"
    session, events = streamed(url, input=question)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert [k for n, k in enumerate(kinds) if n == 0 or kinds[n - 1] != k] == ORDER
    created, completed = events[0]["response"], events[-1]["response"]
    assert created["status"] == "in_progress" and created["output"] == []
    assert created["id"] == completed["id"] and completed["id"].endswith(f"_1_{session}")
    final = Response.model_validate(completed)
    reasoning, message = final.output
    assert reasoning.type == "reasoning" and message.type == "message"
    # The steps first, as the summary; then the answer, whose deltas are all of it.
    steps = texts(events, "response.reasoning_summary_text.delta")
    assert steps.startswith("Understanding the question\n")
    assert reasoning.summary[0].text == steps
    answer = texts(events, "response.output_text.delta")
    assert answer == final.output_text and answer.endswith("doc 1; [2] doc 2")
    done = next(e for e in events if e["type"] == "response.output_text.done")
    assert done["text"] == answer and done["item_id"] == message.id
    assert {e["output_index"] for e in events if e["type"] == "response.output_text.delta"} == {1}
    assert final.usage is not None and final.usage.output_tokens > 0
    # The same question without `stream` (a new chat) gets the same text.
    other, again = create(url, input=question)
    assert other != session and again.output_text == answer


def test_previous_response_id_continues_its_session(server: Server) -> None:
    url, llm = server
    question = "How do I read a CSV file in Python?"
    session, first = create(url, input=question)
    before = len(llm.calls)
    same, second = create(url, input="show me an example", previous_response_id=first.id)
    assert same == session and second.previous_response_id == first.id
    assert second.id.endswith(f"_2_{session}")
    assert asked(url, session) == [question, "show me an example"]
    # The model was given the first turn.
    sent = [message_text(m) for _, messages in llm.calls[before:] for m in messages]
    assert any(question in text for text in sent)
    # A streamed turn continues it too, and a message list as input.
    follow_up = [{"role": "user", "content": [{"type": "input_text", "text": "and in pandas?"}]}]
    third, events = streamed(url, input=follow_up, previous_response_id=second.id)
    assert third == session and events[-1]["response"]["id"].endswith(f"_3_{session}")
    assert asked(url, session) == [question, "show me an example", "and in pandas?"]


def test_two_first_responses_never_share_a_session(server: Server) -> None:
    url, _ = server
    question = "How do I merge two dicts in Python?"
    (one, first), (two, second) = create(url, input=question), create(url, input=question)
    # The second is answered from the cache, with the same text: the transcripts are
    # alike, yet each response continues its own session.
    assert one != two and first.output_text == second.output_text
    for session, response, follow_up in [(one, first, "and in 3.8?"), (two, second, "why?")]:
        continued, _ = create(url, input=follow_up, previous_response_id=response.id)
        assert continued == session and asked(url, session) == [question, follow_up]


def test_going_back_to_an_earlier_response_starts_a_new_session(server: Server) -> None:
    url, _ = server
    question = "How do I count the words of a string in Python?"
    session, first = create(url, input=question)
    _, second = create(url, input="and in a file?", previous_response_id=first.id)
    forked, branch = create(url, input="and with regex?", previous_response_id=first.id)
    assert forked != session and branch.id.endswith(f"_2_{forked}")
    assert asked(url, forked) == [question, "and with regex?"]
    assert history(url, forked)[1]["content"] == history(url, session)[1]["content"]
    assert asked(url, session) == [question, "and in a file?"]
    # The latest response of the first session still continues it.
    again, _ = create(url, input="and per line?", previous_response_id=second.id)
    assert again == session and len(history(url, session)) == 6


def _refused(response: httpx.Response, param: str, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert list(response.json()) == ["error"]
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    return error


def test_an_unknown_previous_response_is_400_in_openais_shape(server: Server) -> None:
    url, llm = server
    session, first = create(url, input="How do I open a socket in Python?")
    unknown = [
        "resp_nope",
        response_id("oai-never-made", 1),
        first.id.replace(f"_1_{session}", f"_2_{session}"),  # a turn not answered yet
        "resp_\x1b]0;HIJACK\x07",
    ]
    before = len(llm.calls)
    for previous in unknown:
        body = {"model": "codeweaver", "input": "and UDP?", "previous_response_id": previous}
        error = _refused(post(url, body), "previous_response_id")
        assert error["code"] == "previous_response_not_found"
        assert error["message"] == f"Previous response with id {previous!r} not found."
        assert "\x1b" not in error["message"]  # shown escaped, as data
    both = {"model": "codeweaver", "input": "and UDP?", "previous_response_id": first.id}
    error = _refused(post(url, both, **{HEADER: session}), "previous_response_id")
    assert "not both" in error["message"]
    assert len(llm.calls) == before and len(history(url, session)) == 2


TOOL: dict[str, Any] = {"type": "function", "name": "run_python", "parameters": {}}
SCHEMA: dict[str, Any] = {"type": "json_schema", "name": "snippet", "schema": {"type": "object"}}
IMAGE: dict[str, Any] = {"type": "input_image", "image_url": "https://x.example/a.png"}
FILE: dict[str, Any] = {"type": "input_file", "file_id": "file-1"}


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"tools": [TOOL]}, "tools"),
        ({"tools": [TOOL], "stream": True}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"text": {"format": {"type": "json_object"}}}, "text.format"),
        ({"text": {"format": SCHEMA}, "stream": True}, "text.format"),
        ({"background": True}, "background"),
        ({"conversation": "conv_1"}, "conversation"),
        ({"input": [{"role": "user", "content": [IMAGE]}]}, "input.0.content"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}, FILE]}]},
            "input.0.content",
        ),
        ({"input": [{"type": "function_call_output", "output": "1"}]}, "input.0.type"),
        ({"input": []}, "input"),
        ({"input": [{"role": "system", "content": "Be brief."}]}, "input"),
        ({"input": "   "}, "input"),
        ({"input": [{"role": "wizard", "content": "x"}]}, "input.0.role"),
        ({"input": [{"type": "message", "content": "x"}]}, "input.0.role"),
        ({"stream": "maybe"}, "stream"),
        ({"metadata": {str(n): "v" for n in range(17)}}, "metadata"),
        ({"input": None}, "input"),
    ],
)
def test_what_cannot_be_honoured_is_400_naming_the_parameter(
    server: Server, options: dict[str, Any], param: str
) -> None:
    url, llm = server
    before = len(llm.calls)
    body = {"model": "codeweaver", "input": QUESTION, **options}
    error = _refused(post(url, body), param)
    assert error["message"]
    if param in {"tools", "text.format"}:
        assert "CodeWeaver answers in Markdown text" in error["message"]
    assert len(llm.calls) == before  # refused before anything ran


def test_the_client_sees_the_400_and_text_format_is_answered(server: Server) -> None:
    url, _ = server
    api = client(url)
    json_text: ResponseTextConfigParam = {
        "format": {"type": "json_schema", "name": "snippet", "schema": {"type": "object"}}
    }
    with pytest.raises(openai.BadRequestError) as caught:
        api.responses.create(model="codeweaver", input=QUESTION, text=json_text)
    assert caught.value.param == "text.format" and "'json_schema'" in caught.value.message
    with pytest.raises(openai.NotFoundError) as missing:
        api.responses.create(model="gpt-4o", input=QUESTION)
    assert missing.value.body["code"] == "model_not_found"  # type: ignore[index]
    reply = api.responses.create(
        model="codeweaver",
        input=QUESTION,
        text={"format": {"type": "text"}},
        tools=[],
        tool_choice="none",
    )
    assert reply.output_text.startswith("Scripted answer to:")


def test_another_users_response_is_not_found(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("alice alice-token-0123456789\nbob bob-token-0123456789\n", encoding="utf-8")
    with serving(tmp_path, api_tokens=tokens) as (url, _):
        alice, bob = client(url, "alice-token-0123456789"), client(url, "bob-token-0123456789")
        with pytest.raises(openai.AuthenticationError):
            client(url, "wrong-token").responses.create(model="codeweaver", input=QUESTION)
        raw = alice.responses.with_raw_response.create(model="codeweaver", input=QUESTION)
        session, first = raw.headers[HEADER], raw.parse()
        with pytest.raises(openai.BadRequestError) as caught:
            bob.responses.create(model="codeweaver", input="and?", previous_response_id=first.id)
        assert caught.value.code == "previous_response_not_found"
        assert caught.value.message.endswith(f"Previous response with id {first.id!r} not found.")
        again = alice.responses.with_raw_response.create(
            model="codeweaver", input="and?", previous_response_id=first.id
        )
        assert again.headers[HEADER] == session
        auth = {"Authorization": "Bearer alice-token-0123456789"}
        assert len(history(url, session, **auth)) == 4


def test_a_full_queue_and_the_rate_limit_answer_in_openais_shape(tmp_path: Path) -> None:
    source = FakeSource(results=[doc(1)], delay=2.0)
    limits = {"api_concurrency": 1, "api_queue": 0, "api_rate_per_minute": 2}
    with serving(tmp_path, source=source, **limits) as (url, _):
        body = {"model": "codeweaver", "input": QUESTION, "stream": True}
        with httpx.stream("POST", f"{url}/v1/responses", json=body, timeout=30) as running:
            deadline = time.monotonic() + 10
            while httpx.get(f"{url}/api/health").json()["queue"]["running"] < 1:
                assert time.monotonic() < deadline, "the run never took its slot"
                time.sleep(0.02)
            busy = post(url, {"model": "codeweaver", "input": "How do I sort a dict?"})
            assert busy.status_code == 503 and int(busy.headers["retry-after"]) >= 1
            assert busy.json()["error"]["type"] == "server_error"
            # The running answer is not disturbed.
            assert running.status_code == 200
            assert "event: response.completed" in list(running.iter_lines())
        limited = post(url, {"model": "codeweaver", "input": QUESTION})
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert limited.json()["error"]["type"] == "rate_limit_error"


def test_a_failed_run_ends_the_stream_with_response_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(*_args: Any) -> AsyncIterator[ServiceEvent]:
        yield ServiceEvent("progress", {"text": "Understanding the question"})
        yield ServiceEvent("token", {"text": "Half an "})
        raise RuntimeError("the store went away")

    monkeypatch.setattr(ChatService, "_run", failing)
    with serving(tmp_path) as (url, _):
        _, events = streamed(url, input=QUESTION)
        failed = post(url, {"model": "codeweaver", "input": QUESTION})
        assert httpx.get(f"{url}/api/health").json()["queue"]["running"] == 0
    assert events[-1]["type"] == "response.failed"
    assert "response.output_text.delta" not in {e["type"] for e in events}  # no draft
    final = Response.model_validate(events[-1]["response"])
    assert final.status == "failed" and final.error is not None
    assert "internal error" in final.error.message and "went away" not in final.error.message
    assert [item.type for item in final.output] == ["reasoning"]
    assert failed.status_code == 503 and failed.json()["error"]["type"] == "server_error"
