"""Every search tool over the real sources: Stack Overflow and GitHub against recorded API
responses (respx, no network), the knowledge base and the local code on temp folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import respx
from mcp import Client
from mcp_types import CallToolResult, TextContent

from codeweaver.kb.store import KnowledgeBase
from codeweaver.mcp_server.server import build_server
from codeweaver.sources.base import Source
from codeweaver.sources.github import GitHubCodeSource
from codeweaver.sources.knowledge_base import KnowledgeBaseSource
from codeweaver.sources.local_code import LocalCodeSource
from codeweaver.sources.stackoverflow import StackOverflowSource
from tests.fakes import make_settings
from tests.unit.mcp_server.helpers import chat_service

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ANSWERS_URL = r"https://api\.stackexchange\.com/2\.3/questions/(?P<ids>[0-9;]+)/answers"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result.content
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def test_every_search_tool_returns_citable_results(tmp_path: Path) -> None:
    docs = tmp_path / "team-docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(
        "# Deploying\n\nSet CW_DEPLOY_TOKEN in the CI secrets before the deploy job runs; "
        "the job reads it and fails without it.\n",
        encoding="utf-8",
    )
    code = tmp_path / "repo"
    code.mkdir()
    (code / "loader.py").write_text(
        "def read_rows(path):\n    with open(path, encoding='utf-8') as handle:\n"
        "        return [line.rstrip('\\n') for line in handle]\n",
        encoding="utf-8",
    )
    settings = make_settings(tmp_path)
    assert KnowledgeBase(settings).add([docs]).chunks_written == 1
    sources: list[Source] = [
        StackOverflowSource(None),
        GitHubCodeSource("ghp_TESTTOKEN0123456789abcdefABCDEF"),
        KnowledgeBaseSource(settings),
        LocalCodeSource(str(code)),
    ]
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as api:
        api.get("https://api.stackexchange.com/2.3/search/advanced").respond(
            200, json=recorded("stackexchange/search_advanced.json")
        )
        api.get(url__regex=ANSWERS_URL).respond(200, json=recorded("stackexchange/answers.json"))
        api.get("https://api.github.com/search/code").respond(
            200, json=recorded("github/search_code.json")
        )
        api.route(host="127.0.0.1").pass_through()
        async with (
            chat_service(tmp_path, sources) as chat,
            Client(build_server(lambda: chat)) as client,
        ):
            query = "How do I read a large file line by line in Python?"
            so = text_of(await client.call_tool("search_stackoverflow", {"query": query}))
            gh_query = "How do I use read_lines to strip the newline from each line in Python?"
            gh = text_of(await client.call_tool("search_github", {"query": gh_query}))
            kb = text_of(
                await client.call_tool(
                    "search_knowledge_base", {"query": "Where is CW_DEPLOY_TOKEN set?"}
                )
            )
            local = text_of(
                await client.call_tool("search_code", {"query": "read_rows open encoding"})
            )
    first_question = recorded("stackexchange/search_advanced.json")["items"][0]
    assert so.startswith("[1] ") and "(stackoverflow)" in so.splitlines()[0]
    assert f"url: {first_question['link']}" in so
    assert "licence: answer by " in so and "CC BY-SA 4.0" in so  # the answer's attribution
    first_file = recorded("github/search_code.json")["items"][0]
    assert gh.startswith("[1] ") and first_file["html_url"] in gh
    assert kb.startswith("[1] ") and "deploy.md" in kb and "CW_DEPLOY_TOKEN" in kb
    assert "reference: kb:" in kb
    assert local.startswith("[1] ") and "loader.py" in local and "read_rows" in local
