"""The OpenAI-compatible API through the official `openai` client, on a real loopback
server: answers, streams, sessions, models, auth and OpenAI-shaped errors."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_openai import ChatOpenAI
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
    ChatCompletionUserMessageParam,
)
from pydantic import BaseModel, SecretStr

from codeweaver.agent.user_text import say
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.llm.scripted import ScriptedChatModel, echo_model
from codeweaver.llm.structured import message_text
from codeweaver.llm.usage import Usage, UsageMeter
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

QUESTION = "How do I read a file line by line in Python?"
# The echo model cites [1]: the cited source is listed, the other one collapsed.
SOURCES_MD = (
    "**Sources**\n\n"
    "- [1] [doc 1](https://docs.example/1) — installed docs\n"
    "- Also retrieved, not cited: [2] doc 2"
)
HEADER = "X-CodeWeaver-Session"
TOKEN = "openai-compat-token-0123456789"
Server = tuple[str, ScriptedChatModel]


@contextmanager
def serving(
    tmp_path: Path, delay: float = 0.0, source: FakeSource | None = None, **settings: Any
) -> Iterator[Server]:
    settings.setdefault("api_rate_per_minute", 1000)
    deps, llm = make_deps(
        tmp_path,
        dict(echo_model().script),
        sources=[source or FakeSource(results=[doc(1), doc(2)], delay=delay)],
        **settings,
    )
    deps.source_timeout = 10.0
    with running_app(deps, ping_seconds=0.2) as url:
        yield url, llm


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("openai")) as running:
        yield running


def client(url: str, key: str = "unused", **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30, **kwargs)


def user(text: str | list[ChatCompletionContentPartParam]) -> ChatCompletionUserMessageParam:
    return {"role": "user", "content": text}


def assistant(text: str) -> ChatCompletionAssistantMessageParam:
    return {"role": "assistant", "content": text}


def streamed(stream: Any) -> tuple[list[Any], str, str]:
    """The chunks, the content and the reasoning of a stream."""
    chunks = list(stream)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    content = "".join(d.content or "" for d in deltas)
    reasoning = "".join(getattr(d, "reasoning_content", None) or "" for d in deltas)
    return chunks, content, reasoning


@contextmanager
def metered(llm: ScriptedChatModel) -> Iterator[UsageMeter]:
    """A meter on the server's model while the block runs (the tests run one at a time,
    so it sees exactly the calls of the requests sent in the block)."""
    meter, callbacks = UsageMeter(), llm.callbacks
    meter.attach(llm)
    try:
        yield meter
    finally:
        llm.callbacks = callbacks


def openai_usage(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def ask(url: str, messages: list[ChatCompletionMessageParam]) -> tuple[str, str]:
    """(the session, the reply) of a request without the session header."""
    raw = client(url).chat.completions.with_raw_response.create(
        model="codeweaver", messages=messages
    )
    return raw.headers[HEADER], raw.parse().choices[0].message.content or ""


def history(url: str, session: str, **headers: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/api/sessions/{session}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["history"]  # type: ignore[no-any-return]


def test_completion_holds_the_answer_and_numbered_sources(server: Server) -> None:
    url, llm = server
    with metered(llm) as meter:
        raw = client(url).chat.completions.with_raw_response.create(
            model="codeweaver",
            messages=[{"role": "system", "content": "Be brief."}, user(QUESTION)],
            temperature=0.2,  # accepted and ignored
        )
    reply = raw.parse()
    assert reply.object == "chat.completion" and reply.model == "codeweaver"
    assert reply.id.startswith("chatcmpl-") and abs(reply.created - time.time()) < 60
    (choice,) = reply.choices
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    content = choice.message.content or ""
    assert content.startswith(f"Scripted answer to: {QUESTION}")
    assert content.endswith("\n\n" + SOURCES_MD)
    # Every model call of the answer: the scripted model counts words as tokens.
    assert reply.usage is not None and reply.usage.completion_tokens > 0
    assert reply.usage.model_dump(exclude_none=True) == openai_usage(meter.snapshot())
    session = raw.headers[HEADER]
    assert session.startswith("oai-")
    turns = history(url, session)
    assert [m["role"] for m in turns] == ["user", "assistant"]
    assert turns[0]["content"] == QUESTION and content.startswith(turns[1]["content"])


def test_stream_sends_role_thinking_answer_sources_stop(server: Server) -> None:
    url, _ = server
    question = "How do I sort a list of tuples by the second item in Python?"
    stream = client(url).chat.completions.create(
        model="codeweaver", messages=[user(question)], stream=True
    )
    chunks, content, reasoning = streamed(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("chatcmpl-")
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks][-1] == "stop"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    # The check removed the echo's citation (its sentence is not in doc 1): the answer
    # says first that the sources found are not cited, and lists them collapsed.
    notice = say("none_cited_note", "en", count=2)
    assert content.startswith(f"{notice}\n\nScripted answer to: {question}")
    assert content.endswith("**Sources**\n\n- Also retrieved, not cited: [1] doc 1; [2] doc 2")
    # The steps come before the answer, as thinking in words, and never after it.
    assert reasoning.startswith("Understanding the question\nSearching installed docs…\n")
    assert "analyze_question" not in reasoning
    first_answer = next(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    thinking = [
        i
        for i, c in enumerate(chunks)
        if c.choices and getattr(c.choices[0].delta, "reasoning_content", None)
    ]
    assert thinking and thinking[0] > 0 and thinking[-1] < first_answer


def test_raw_stream_ends_with_done_and_usage_when_asked(server: Server) -> None:
    url, llm = server
    body = {
        "model": "codeweaver",
        "messages": [user("How do I reverse a string in Python?")],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with (
        metered(llm) as meter,
        httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=30) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers[HEADER].startswith("oai-")
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    last = json.loads(data[-2])
    assert last["choices"] == [] and last["usage"] == openai_usage(meter.snapshot())
    assert last["usage"]["prompt_tokens"] > 0 and last["usage"]["completion_tokens"] > 0
    assert json.loads(data[-3])["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }


def test_follow_up_continues_the_session_on_the_clarification_path(server: Server) -> None:
    url, llm = server
    api = client(url)
    question = "How do I read a CSV file in Python?"
    raw = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user(question)]
    )
    session, answer = raw.headers[HEADER], raw.parse().choices[0].message.content or ""
    before = len(llm.calls)
    follow_up: list[ChatCompletionMessageParam] = [user(question), assistant(answer)]
    raw_stream = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[*follow_up, user("그럼 예제 코드도 보여줘")], stream=True
    )
    assert raw_stream.headers[HEADER] == session
    _, content, reasoning = streamed(raw_stream.parse())
    # The steps in the question's language: it is answered from the conversation.
    assert reasoning == "질문을 파악하는 중\n지금까지의 대화를 바탕으로 답하는 중\n"
    assert "generate_with_history" in [task for task, _ in llm.calls[before:]]
    assert "그럼 예제 코드도 보여줘" in content
    # Content parts work as well as strings; the third turn, sent with the whole
    # conversation so far, stays in the session.
    third = api.chat.completions.with_raw_response.create(
        model="codeweaver",
        messages=[
            *follow_up,
            user("그럼 예제 코드도 보여줘"),
            assistant(content),
            user([{"type": "text", "text": "show me an example"}]),
        ],
    )
    assert third.headers[HEADER] == session
    turns = history(url, session)
    assert [m["content"] for m in turns if m["role"] == "user"] == [
        question,
        "그럼 예제 코드도 보여줘",
        "show me an example",
    ]


def test_a_different_chat_gets_a_different_session(server: Server) -> None:
    url, _ = server
    api = client(url)
    question = "How do I parse JSON in Python?"
    first = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user(question)]
    )
    # The same opening question in a new chat: a new session, and each continues its own.
    second = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user(f"  {question}\n")]
    )
    assert first.headers[HEADER] != second.headers[HEADER]
    other = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user("How do I parse XML in Python?")]
    )
    assert other.headers[HEADER] not in {first.headers[HEADER], second.headers[HEADER]}
    # History the server never saw starts a new session, which holds that history.
    unknown = api.chat.completions.with_raw_response.create(
        model="codeweaver",
        messages=[
            user(question),
            assistant("An answer from elsewhere."),
            user("show me an example"),
        ],
    )
    assert unknown.headers[HEADER] not in {first.headers[HEADER], second.headers[HEADER]}
    turns = history(url, unknown.headers[HEADER])
    assert [m["content"] for m in turns[:3]] == [
        question,
        "An answer from elsewhere.",
        "show me an example",
    ]
    assert len(turns) == 4 and len(history(url, first.headers[HEADER])) == 2


def test_two_chats_that_start_alike_never_merge(server: Server) -> None:
    url, llm = server
    question = "How do I merge two dicts in Python?"
    before = len(llm.calls)
    first, answer = ask(url, [user(question)])
    middle = len(llm.calls)
    second, again = ask(url, [user(question)])
    # The second chat's first answer comes from the cache: the same text.
    assert "generate_answer" in llm.tasks()[before:middle]
    assert "generate_answer" not in llm.tasks()[middle:]
    assert first != second and again == answer
    follow_ups = ["show me an example with ** unpacking", "and what about the | operator?"]
    # Both sessions hold exactly what each chat sends: neither is continued.
    chats = [ask(url, [user(question), assistant(answer), user(f)]) for f in follow_ups]
    assert len({first, second, *(session for session, _ in chats)}) == 4
    for (session, _), follow_up in zip(chats, follow_ups, strict=True):
        asked = [m["content"] for m in history(url, session) if m["role"] == "user"]
        assert asked == [question, follow_up]
    assert len(history(url, first)) == len(history(url, second)) == 2
    # From then on each chat goes on in its own session.
    for (session, reply), follow_up in zip(chats, follow_ups, strict=True):
        transcript = [user(question), assistant(answer), user(follow_up), assistant(reply)]
        assert ask(url, [*transcript, user("Thanks! Does it copy?")])[0] == session
        asked = [m["content"] for m in history(url, session) if m["role"] == "user"]
        assert asked == [question, follow_up, "Thanks! Does it copy?"]


def test_an_ambiguous_transcript_starts_a_session_seeded_with_it(server: Server) -> None:
    url, llm = server
    question = "How do I flatten a list of lists in Python?"
    (one, answer), (two, again) = ask(url, [user(question)]), ask(url, [user(question)])
    assert one != two and answer == again  # two sessions hold this very turn
    before = len(llm.calls)
    session, _ = ask(url, [user(question), assistant(answer), user("show me an example")])
    assert session not in {one, two}
    turns = history(url, session)
    assert [(m["role"], m["content"]) for m in turns[:3]] == [
        ("user", question),
        ("assistant", answer),  # the client's text, its sources list included
        ("user", "show me an example"),
    ]
    assert turns[1]["sources"] == [] and len(turns) == 4
    # The model was given the conversation: the question is only in the seeded history.
    sent = [message_text(m) for _, messages in llm.calls[before:] for m in messages]
    assert any(question in text for text in sent)


def test_an_edited_transcript_does_not_continue_its_session(server: Server) -> None:
    url, _ = server
    question = "How do I count the words of a string in Python?"
    session, answer = ask(url, [user(question)])
    edited = answer.replace("Scripted answer", "An edited answer")
    assert edited != answer
    forked, _ = ask(url, [user(question), assistant(edited), user("and in a file?")])
    assert forked != session and len(history(url, session)) == 2
    assert history(url, forked)[1]["content"] == edited
    # The transcript as sent continues it, even with the steps a client put back
    # in front of the answer.
    shown = f"<think>Understanding the question\n</think>\n\n{answer}"
    assert ask(url, [user(question), assistant(shown), user("and in a file?")])[0] == session
    assert len(history(url, session)) == 4


def test_requests_sent_at_once_get_sessions_of_their_own(tmp_path: Path) -> None:
    question = "How do I zip two lists in Python?"
    with serving(tmp_path, delay=1.0) as (url, _), ThreadPoolExecutor(2) as pool:
        sessions = list(pool.map(lambda _: ask(url, [user(question)])[0], range(2)))
        assert sessions[0] != sessions[1]
        assert [len(history(url, s)) for s in sessions] == [2, 2]


TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "run_python", "parameters": {"type": "object", "properties": {}}},
}
SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "snippet", "schema": {"type": "object", "properties": {}}},
}


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"response_format": SCHEMA}, "response_format"),
        ({"tools": [TOOL]}, "tools"),
        ({"tools": [TOOL], "stream": True}, "tools"),
        ({"functions": [TOOL["function"]]}, "functions"),
        ({"tool_choice": "auto"}, "tool_choice"),
        ({"tool_choice": {"type": "function", "function": {"name": "x"}}}, "tool_choice"),
        ({"function_call": "auto"}, "function_call"),
    ],
)
def test_structured_output_and_tools_are_refused_naming_the_parameter(
    server: Server, options: dict[str, Any], param: str
) -> None:
    url, llm = server
    before = len(llm.calls)
    with pytest.raises(openai.BadRequestError) as caught:
        client(url).chat.completions.create(
            model="codeweaver", messages=[user(QUESTION)], **options
        )
    assert caught.value.status_code == 400 and caught.value.param == param
    assert caught.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    assert "CodeWeaver answers in Markdown text" in caught.value.message
    assert len(llm.calls) == before  # refused before anything ran


def test_text_format_and_no_tools_are_answered(server: Server) -> None:
    url, _ = server
    reply = client(url).chat.completions.create(
        model="codeweaver",
        messages=[user(QUESTION)],
        response_format={"type": "text"},
        tools=[],
        tool_choice="none",
    )
    assert (reply.choices[0].message.content or "").startswith("Scripted answer to:")


class Snippet(BaseModel):
    code: str
    explanation: str


def test_langchain_structured_output_gets_the_400_for_response_format(server: Server) -> None:
    url, _ = server
    model = ChatOpenAI(
        model="codeweaver", base_url=f"{url}/v1", api_key=SecretStr("unused"), max_retries=0
    )
    # LangChain asks for a `json_schema` response format by default.
    structured = model.with_structured_output(Snippet)
    with pytest.raises(openai.BadRequestError) as caught:
        structured.invoke("Show me how to read a file in Python.")
    assert caught.value.status_code == 400 and caught.value.param == "response_format"
    assert "'json_schema' is not supported" in caught.value.message


def test_a_cached_answer_counts_only_the_calls_it_made(server: Server) -> None:
    url, llm = server
    question = "How do I check whether a file exists in Python?"
    with metered(llm) as meter:
        first = client(url).chat.completions.create(model="codeweaver", messages=[user(question)])
    fresh = meter.snapshot()
    assert first.usage is not None
    assert first.usage.model_dump(exclude_none=True) == openai_usage(fresh)
    before = len(llm.calls)
    with metered(llm) as meter:
        again = client(url).chat.completions.create(model="codeweaver", messages=[user(question)])
    assert again.choices[0].message.content == first.choices[0].message.content
    cached = meter.snapshot()
    assert cached.calls == len(llm.calls) - before < fresh.calls
    assert again.usage is not None
    assert again.usage.model_dump(exclude_none=True) == openai_usage(cached)


def test_the_session_header_names_the_session(server: Server) -> None:
    url, _ = server
    api = client(url, default_headers={HEADER: "my-chat_1"})
    first = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user("How do I open a socket in Python?")]
    )
    second = api.chat.completions.with_raw_response.create(
        model="codeweaver", messages=[user("show me an example")]
    )
    assert first.headers[HEADER] == second.headers[HEADER] == "my-chat_1"
    assert len(history(url, "my-chat_1")) == 4
    with pytest.raises(openai.BadRequestError) as caught:
        client(url).chat.completions.create(
            model="codeweaver", messages=[user(QUESTION)], extra_headers={HEADER: "bad id!"}
        )
    assert caught.value.body["param"] == HEADER  # type: ignore[index]


def test_librarian_model_uses_the_librarian(server: Server) -> None:
    url, llm = server
    before = len(llm.calls)
    raw = client(url).chat.completions.with_raw_response.create(
        model="codeweaver-librarian", messages=[user("How do I copy a file in Python?")]
    )
    reply = raw.parse()
    assert reply.model == "codeweaver-librarian"
    assert "librarian_step" in [task for task, _ in llm.calls[before:]]
    assert (reply.choices[0].message.content or "").startswith("Scripted answer to:")
    assert history(url, raw.headers[HEADER])[1]["mode"] == "librarian"


def test_models_are_listed_and_retrieved(server: Server) -> None:
    url, _ = server
    api = client(url)
    models = list(api.models.list())
    assert [(m.id, m.object, m.owned_by) for m in models] == [
        ("codeweaver", "model", "codeweaver"),
        ("codeweaver-librarian", "model", "codeweaver"),
    ]
    assert all(isinstance(m.created, int) and m.created > 0 for m in models)
    assert api.models.retrieve("codeweaver-librarian").id == "codeweaver-librarian"
    with pytest.raises(openai.NotFoundError):
        api.models.retrieve("gpt-4o")


def test_unknown_model_is_404_in_openais_shape(server: Server) -> None:
    url, _ = server
    with pytest.raises(openai.NotFoundError) as caught:
        client(url).chat.completions.create(model="gpt-4o", messages=[user(QUESTION)])
    error = caught.value.body
    assert isinstance(error, dict) and set(error) == {"message", "type", "param", "code"}
    assert error["param"] == "model" and error["code"] == "model_not_found"
    assert "gpt-4o" in error["message"] and error["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"model": "codeweaver"}, "messages", "Field required"),
        ({"model": "codeweaver", "messages": []}, "messages", "at least 1"),
        ({"messages": [user(QUESTION)]}, "model", "Field required"),
        ({"model": "codeweaver", "messages": "hello"}, "messages", "valid list"),
        ({"model": 5, "messages": [user(QUESTION)]}, "model", "valid string"),
        ({"model": "codeweaver", "messages": [user(QUESTION)], "stream": "maybe"}, "stream", ""),
        ({"model": "codeweaver", "messages": [{"role": "wizard", "content": "x"}]}, None, ""),
        ({"model": "codeweaver", "messages": [{"role": "user", "content": 3}]}, None, ""),
        (
            {"model": "codeweaver", "messages": [{"role": "system", "content": "Be brief."}]},
            "messages",
            "role 'user'",
        ),
        (
            {
                "model": "codeweaver",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is in this picture?"},
                            {"type": "image_url", "image_url": {"url": "https://x.example/a.png"}},
                        ],
                    }
                ],
            },
            "messages.0.content",
            "'image_url' are not supported",
        ),
        ({"model": "codeweaver", "messages": [user("   ")]}, "messages", ""),
    ],
)
def test_malformed_requests_are_400_in_openais_shape(
    server: Server, body: dict[str, Any], param: str | None, words: str
) -> None:
    url, _ = server
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 400, response.text
    assert list(response.json()) == ["error"]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and words in error["message"]
    if param is not None:
        assert error["param"] == param
    else:
        assert error["param"].startswith("messages.0.")


def test_image_parts_and_bad_json_through_the_client(server: Server) -> None:
    url, _ = server
    image: ChatCompletionContentPartParam = {
        "type": "image_url",
        "image_url": {"url": "https://x.example/a.png"},
    }
    with pytest.raises(openai.BadRequestError, match="not supported"):
        client(url).chat.completions.create(model="codeweaver", messages=[user([image])])
    response = httpx.post(
        f"{url}/v1/chat/completions",
        content=b'{"model": "codeweaver", "messages": [',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400 and response.json()["error"]["message"]


def test_guard_errors_get_openais_shape_under_v1_only(server: Server) -> None:
    url, _ = server
    body = {"model": "codeweaver", "messages": [user("x" * 70_000)]}
    guarded = {
        413: httpx.post(f"{url}/v1/chat/completions", json=body),
        421: httpx.get(f"{url}/v1/models", headers={"Host": "attacker.example"}),
        403: httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "codeweaver", "messages": [user(QUESTION)]},
            headers={"Origin": "https://attacker.example"},
        ),
    }
    for status, response in guarded.items():
        assert response.status_code == status
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["message"]
        assert int(response.headers["content-length"]) == len(response.content)
    assert guarded[403].json()["error"]["type"] == "permission_error"
    assert list(httpx.get(f"{url}/api/health", headers={"Host": "attacker.example"}).json()) == [
        "detail"
    ]
    unknown = httpx.get(f"{url}/v1/embeddings")
    assert unknown.status_code == 404 and unknown.json()["error"]["message"] == "Not Found"


def test_the_api_keeps_its_own_error_shape(server: Server) -> None:
    url, _ = server
    invalid = httpx.post(f"{url}/api/chat", json={})
    assert invalid.status_code == 422 and invalid.json()["detail"][0]["loc"] == ["body", "message"]
    missing = httpx.get(f"{url}/api/sessions/nope")
    assert missing.status_code == 404 and missing.json() == {"detail": "no session nope"}


def test_token_is_required_when_configured(tmp_path: Path) -> None:
    with serving(tmp_path, api_token=SecretStr(TOKEN)) as (url, _):
        with pytest.raises(openai.AuthenticationError) as caught:
            client(url, key="wrong-token").models.list()
        assert caught.value.body["code"] == "invalid_api_key"  # type: ignore[index]
        with pytest.raises(openai.AuthenticationError):
            client(url, key="wrong-token").chat.completions.create(
                model="codeweaver", messages=[user(QUESTION)]
            )
        bare = httpx.post(f"{url}/v1/chat/completions", json={"model": "codeweaver"})
        assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
        assert bare.json()["error"]["type"] == "authentication_error"
        assert httpx.get(f"{url}/api/sessions").json() == {
            "detail": "missing or wrong bearer token"
        }
        api = client(url, key=TOKEN)
        assert [m.id for m in api.models.list()] == ["codeweaver", "codeweaver-librarian"]
        raw = api.chat.completions.with_raw_response.create(
            model="codeweaver", messages=[user(QUESTION)]
        )
        assert raw.parse().choices[0].finish_reason == "stop"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert len(history(url, raw.headers[HEADER], **auth)) == 2


def test_rate_limit_is_shared_with_the_api(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path, dict(echo_model().script), sources=[FakeSource()], api_rate_per_minute=1
    )
    with running_app(deps) as url:
        assert httpx.post(f"{url}/api/chat", json={"message": QUESTION}, timeout=30).is_success
        with pytest.raises(openai.RateLimitError) as caught:
            client(url).chat.completions.create(model="codeweaver", messages=[user(QUESTION)])
    assert int(caught.value.response.headers["retry-after"]) >= 1
    assert caught.value.body["type"] == "rate_limit_error"  # type: ignore[index]


def test_a_failed_run_ends_the_stream_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(*_args: Any) -> AsyncIterator[ServiceEvent]:
        yield ServiceEvent("think", {"node": "create_plan", "text": "planning"})
        yield ServiceEvent("token", {"text": "Half an "})
        raise RuntimeError("the store went away")

    monkeypatch.setattr(ChatService, "_run", failing)
    with serving(tmp_path) as (url, _):
        stream = client(url).chat.completions.create(
            model="codeweaver", messages=[user(QUESTION)], stream=True
        )
        seen: list[Any] = []
        with pytest.raises(openai.APIError) as caught:
            seen.extend(stream)
        assert httpx.get(f"{url}/api/health").json()["queue"]["running"] == 0
    # The draft is never streamed: only the checked answer is content.
    assert [c.choices[0].delta.content for c in seen] == [""]
    assert "internal error" in caught.value.message
    assert "store went away" not in caught.value.message
    assert caught.value.body["type"] == "server_error"  # type: ignore[index]


def test_disconnect_cancels_the_run_and_frees_its_session(tmp_path: Path) -> None:
    # A search of 8 s: a slot given back much sooner was given back by the cancellation.
    source = FakeSource(results=[doc(1), doc(2)], delay=8.0)
    with serving(tmp_path, source=source) as (url, _):
        body = {"model": "codeweaver", "messages": [user(QUESTION)], "stream": True}
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            session = response.headers[HEADER]
            for line in response.iter_lines():
                if "reasoning_content" in line:  # the run has started
                    assert httpx.get(f"{url}/api/health").json()["queue"]["running"] == 1
                    break
            else:
                pytest.fail("the stream never reported a step")
        deadline = time.monotonic() + 4
        while httpx.get(f"{url}/api/health").json()["queue"]["running"]:
            assert time.monotonic() < deadline, "the run kept its slot after the disconnect"
            time.sleep(0.05)
        # Nothing was recorded, and the session is free for the chat's next try.
        assert httpx.get(f"{url}/api/sessions/{session}").status_code == 404
        source.delay = 0.0
        assert ask(url, [user(QUESTION)])[0] == session
        assert len(history(url, session)) == 2
