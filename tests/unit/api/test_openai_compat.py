"""The OpenAI-compatible API through the official `openai` client, on a real loopback
server: answers, streams, sessions, models, auth and OpenAI-shaped errors."""

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
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
    ChatCompletionUserMessageParam,
)
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.api.background import serve_in_thread
from codeweaver.agent.user_text import say
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.llm.scripted import ScriptedChatModel, echo_model
from tests.fakes import FakeSource, doc, make_deps

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
def serving(tmp_path: Path, delay: float = 0.0, **settings: Any) -> Iterator[Server]:
    deps, llm = make_deps(
        tmp_path,
        dict(echo_model().script),
        sources=[FakeSource(results=[doc(1), doc(2)], delay=delay)],
        api_rate_per_minute=1000,
        **settings,
    )
    deps.source_timeout = 10.0
    with serve_in_thread(create_app(deps.settings, deps=deps, ping_seconds=0.2)) as url:
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


def history(url: str, session: str, **headers: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/api/sessions/{session}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["history"]  # type: ignore[no-any-return]


def test_completion_holds_the_answer_and_numbered_sources(server: Server) -> None:
    url, _ = server
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
    assert reply.usage is not None and reply.usage.total_tokens == 0
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
    assert thinking and 0 < thinking[0] and thinking[-1] < first_answer


def test_raw_stream_ends_with_done_and_usage_when_asked(server: Server) -> None:
    url, _ = server
    body = {
        "model": "codeweaver",
        "messages": [user("How do I reverse a string in Python?")],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers[HEADER].startswith("oai-")
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    last = json.loads(data[-2])
    assert last["choices"] == [] and last["usage"]["total_tokens"] == 0
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
    # Content parts work as well as strings; the third turn stays in the session.
    third = api.chat.completions.with_raw_response.create(
        model="codeweaver",
        messages=[
            *follow_up,
            user("그럼 예제 코드도 보여줘"),
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
    # History the server never saw starts a new session (nothing is replayed).
    unknown = api.chat.completions.with_raw_response.create(
        model="codeweaver",
        messages=[
            user(question),
            assistant("An answer from elsewhere."),
            user("show me an example"),
        ],
    )
    assert unknown.headers[HEADER] not in {first.headers[HEADER], second.headers[HEADER]}
    assert len(history(url, unknown.headers[HEADER])) == 2


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
    with serve_in_thread(create_app(deps.settings, deps=deps)) as url:
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


def test_disconnect_cancels_the_run(tmp_path: Path) -> None:
    with serving(tmp_path, delay=3.0) as (url, _):
        body = {"model": "codeweaver", "messages": [user(QUESTION)], "stream": True}
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if "Searching" in line and "reasoning_content" in line:
                    assert httpx.get(f"{url}/api/health").json()["queue"]["running"] == 1
                    break
            else:
                pytest.fail("the stream never reported a search")
        deadline = time.monotonic() + 5
        while httpx.get(f"{url}/api/health").json()["queue"]["running"]:
            assert time.monotonic() < deadline, "the run kept its slot after the disconnect"
            time.sleep(0.05)
