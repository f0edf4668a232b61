"""`/v1` through clients no one here wrote: the official `openai` client, LangChain's
`ChatOpenAI` and the `llm` command. Each shows the checked answer: what streams is the
same text as the reply to a request that does not stream, citations and sources
included, the steps come as reasoning before it, and a hostile title stays inert."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from codeweaver.llm.scripted import echo_model
from codeweaver.vocabulary import SearchResult
from tests.fakes import make_deps
from tests.servers import running_app

QUESTION = "How do I read a file line by line in Python?"
# A knowledge-base document whose title carries a terminal escape, a bell, markup and a
# right-to-left override ("\u202eevil" shows as "live").
TITLE = "files.md — Reading\x1b]0;HIJACK\x07\x1b[31m <img src=x onerror=alert(1)> \u202eevil"
KB_DOC: SearchResult = {
    "title": TITLE,
    "url": "https://wiki.example/files#L1",
    "snippet": "To read a file line by line in Python, iterate over the file object: "
    "`for line in f:` reads one line at a time.",
    "source": "knowledge_base",
    "score": 0.9,
    "reference": "kb:files.md#0",
}
LLM_EXE = Path(sys.executable).with_name("llm")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.fakes import FakeSource

    tmp = tmp_path_factory.mktemp("clients")
    deps, _ = make_deps(
        tmp,
        dict(echo_model().script),
        sources=[FakeSource("knowledge_base", results=[KB_DOC])],
        api_rate_per_minute=1000,
        cache_enabled=False,  # every request computes its answer: none is a cache hit
    )
    with running_app(deps) as running:
        yield running


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)


def _inert(text: str) -> None:
    for bad in ("\x1b", "\x07", "HIJACK", "\u202e"):
        assert bad not in text, f"{bad!r} reached the client"
    # Markup only backslash-escaped, so a Markdown renderer shows it as text.
    assert not re.search(r"(?<!\\)<img", text)


@pytest.fixture(scope="module")
def reply(url: str) -> str:
    """The content of the reply to a request that does not stream."""
    completion = _client(url).chat.completions.create(
        model="codeweaver", messages=[{"role": "user", "content": QUESTION}]
    )
    return completion.choices[0].message.content or ""


def test_the_reply_cites_and_lists_the_inert_source(reply: str) -> None:
    assert reply.startswith(f"Scripted answer to: {QUESTION} [1]\n\n**Sources**\n\n")
    # The title cleaned of controls and the override; its markup escaped for Markdown.
    expected = "files.md — Reading \\<img src=x onerror=alert(1)\\> evil"
    assert f"- [1] [{expected}](https://wiki.example/files#L1) — knowledge base" in reply
    _inert(reply)


def test_the_official_client_streams_the_same_text_with_reasoning_first(
    url: str, reply: str
) -> None:
    stream = _client(url).chat.completions.create(
        model="codeweaver", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    kinds: list[str] = []
    content, reasoning = "", ""
    for chunk in stream:
        if not chunk.choices:
            continue
        delta: Any = chunk.choices[0].delta
        if delta.content:
            kinds.append("content")
            content += delta.content
        if getattr(delta, "reasoning_content", None):
            kinds.append("reasoning")
            reasoning += delta.reasoning_content
    assert content == reply
    first = kinds.index("content")
    assert "reasoning" in kinds[:first] and "reasoning" not in kinds[first:]
    lines = reasoning.splitlines()
    assert 3 <= len(lines) <= 12, lines
    assert lines[:2] == ["Understanding the question", "Searching knowledge base…"]
    _inert(reasoning)


def test_langchain_streams_the_same_text(url: str, reply: str) -> None:
    model = ChatOpenAI(
        model="codeweaver", base_url=f"{url}/v1", api_key=SecretStr("unused"), max_retries=0
    )
    streamed = "".join(str(chunk.content) for chunk in model.stream(QUESTION))
    assert streamed == reply


@pytest.mark.skipif(not LLM_EXE.is_file(), reason="the `llm` command is not installed")
def test_the_llm_command_prints_the_same_text(url: str, reply: str, tmp_path: Path) -> None:
    # `llm` reads OpenAI-compatible models from its user folder.
    (tmp_path / "extra-openai-models.yaml").write_text(
        f"- model_id: codeweaver\n  model_name: codeweaver\n  api_base: {url}/v1\n",
        encoding="utf-8",
    )
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path)}
    done = subprocess.run(
        [str(LLM_EXE), "-m", "codeweaver", "--no-log", QUESTION],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n") == reply
    _inert(done.stdout)


def test_the_official_client_speaks_the_responses_api(url: str, reply: str) -> None:
    from openai.types.responses import (
        ResponseCompletedEvent,
        ResponseReasoningSummaryTextDeltaEvent,
        ResponseTextDeltaEvent,
    )

    api = _client(url)
    response = api.responses.create(model="codeweaver", input=QUESTION)
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output_text == reply
    stream = api.responses.create(model="codeweaver", input=QUESTION, stream=True)
    kinds: list[str] = []
    text, summary, completed = "", "", None
    for event in stream:
        kinds.append(event.type)
        if isinstance(event, ResponseTextDeltaEvent):
            text += event.delta
        elif isinstance(event, ResponseReasoningSummaryTextDeltaEvent):
            summary += event.delta
        elif isinstance(event, ResponseCompletedEvent):
            completed = event.response
    assert text == reply and completed is not None and completed.output_text == reply
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    first = kinds.index("response.output_text.delta")
    assert "response.reasoning_summary_text.delta" in kinds[:first]
    assert "response.reasoning_summary_text.delta" not in kinds[first:]
    assert summary.splitlines()[:2] == ["Understanding the question", "Searching knowledge base…"]
    _inert(summary)
    # The streamed response is continued by its id.
    follow_up = api.responses.create(
        model="codeweaver", input="show me an example", previous_response_id=completed.id
    )
    assert follow_up.previous_response_id == completed.id and follow_up.output_text
