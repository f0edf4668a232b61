"""What `tools/list` says: only the tools of enabled sources, annotations that match what
each tool reaches, and input schemas that state the limits the service enforces."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp_types import TextContent, Tool

from codeweaver.agent.rules.input_check import (
    MAX_QUESTION_CHARS,
    InvalidQuestionError,
    validate_question,
)
from codeweaver.config import Settings
from codeweaver.mcp_server.arguments import MAX_LIMIT, MAX_QUERY_CHARS
from codeweaver.mcp_server.search import reaches_network, search_tools
from codeweaver.mcp_server.server import build_server
from codeweaver.sources.base import source_info, source_infos
from codeweaver.sources.github import GitHubCodeSource
from codeweaver.sources.github_issues import GitHubIssuesSource
from codeweaver.sources.installed_docs.source import InstalledDocsSource
from codeweaver.sources.knowledge_base import KnowledgeBaseSource
from codeweaver.sources.local_code import LocalCodeSource
from codeweaver.sources.npm_docs.source import NpmDocsSource
from codeweaver.sources.python_docs.source import PythonDocsSource
from codeweaver.sources.stackoverflow import StackOverflowSource
from tests.fakes import make_settings
from tests.unit.mcp_server.helpers import QUESTION, chat_service

# The class of every source a search tool asks.
SOURCE_CLASSES: dict[str, type] = {
    "installed_docs": InstalledDocsSource,
    "python_docs": PythonDocsSource,
    "npm_docs": NpmDocsSource,
    "stackoverflow": StackOverflowSource,
    "github": GitHubCodeSource,
    "github_issues": GitHubIssuesSource,
    "local_code": LocalCodeSource,
    "knowledge_base": KnowledgeBaseSource,
}


def settings_with(tmp_path: Path, sources: str) -> Settings:
    return make_settings(tmp_path).model_copy(update={"enabled_sources": sources})


async def listed(tmp_path: Path, settings: Settings | None) -> dict[str, Tool]:
    async with (
        chat_service(tmp_path) as chat,
        Client(build_server(lambda: chat, settings=settings)) as client,
    ):
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def text_of(result: object) -> str:
    content = result.content[0]  # type: ignore[attr-defined]
    assert isinstance(content, TextContent)
    return content.text


async def test_a_tool_whose_sources_are_all_disabled_is_not_listed(tmp_path: Path) -> None:
    enabled = "installed_docs,stackoverflow,local_code,knowledge_base"
    settings = settings_with(tmp_path, enabled)
    assert not settings.source_enabled("github") and not settings.source_enabled("github_issues")
    tools = await listed(tmp_path, settings)
    assert "search_github" not in tools
    assert set(tools) == {"ask", "search_docs", "search_stackoverflow", "search_code",
                          "search_knowledge_base"}  # fmt: skip
    # One enabled source of several is enough to list the tool.
    assert "search_github" in await listed(tmp_path, settings_with(tmp_path, "github_issues"))
    assert set(await listed(tmp_path, settings_with(tmp_path, "none"))) == {"ask"}
    assert set(await listed(tmp_path, settings_with(tmp_path, "all"))) == {"ask", *search_tools()}


async def test_a_hidden_tool_cannot_be_called(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "installed_docs")
    async with (
        chat_service(tmp_path) as chat,
        Client(build_server(lambda: chat, settings=settings)) as client,
    ):
        hidden = await client.call_tool("search_github", {"query": "httpx"})
        shown = await client.call_tool("search_docs", {"query": "open"})
    assert hidden.is_error and "Unknown tool: search_github" in text_of(hidden)
    assert not shown.is_error


@pytest.mark.parametrize(
    ("tool", "open_world"),
    [
        ("ask", True),  # with every source enabled, it asks Stack Overflow and GitHub
        ("search_docs", False),
        ("search_stackoverflow", True),
        ("search_github", True),
        ("search_code", False),
        ("search_knowledge_base", False),
    ],
)
async def test_annotations_say_which_tools_reach_the_network(
    tmp_path: Path, tool: str, open_world: bool
) -> None:
    annotations = (await listed(tmp_path, None))[tool].annotations
    assert annotations is not None
    assert annotations.read_only_hint is True
    assert annotations.destructive_hint is not True
    assert annotations.open_world_hint is open_world
    assert annotations.title


@pytest.mark.parametrize(
    ("sources", "open_world"),
    [("installed_docs,local_code,knowledge_base", False), ("none", False),
     ("installed_docs,stackoverflow", True), ("all", True), ("my_plugin", True)],
)  # fmt: skip
async def test_ask_is_open_world_only_when_an_enabled_source_is_online(
    tmp_path: Path, sources: str, open_world: bool
) -> None:
    annotations = (await listed(tmp_path, settings_with(tmp_path, sources)))["ask"].annotations
    assert annotations is not None and annotations.open_world_hint is open_world


@pytest.mark.parametrize("name", sorted(SOURCE_CLASSES))
def test_the_local_sources_are_the_offline_ones(name: str) -> None:
    # A source class says it searches this machine only with `offline = True`.
    offline = getattr(SOURCE_CLASSES[name], "offline", False) is True
    assert source_info(name).offline is offline
    assert reaches_network([name]) is not offline


def test_every_source_a_tool_asks_is_classified() -> None:
    asked = {name for row in search_tools().values() for name in row.sources}
    assert asked == set(SOURCE_CLASSES)
    assert asked >= {name for name, info in source_infos().items() if info.offline}


def test_the_tools_are_what_the_sources_declare() -> None:
    # Each source names its tool where it registers; a tool asks its sources in the
    # search nodes' order, with the intent the tool declares.
    tools = {name: (row.sources, row.tool.intent) for name, row in search_tools().items()}
    assert tools == {
        "search_stackoverflow": (("stackoverflow",), "debugging"),
        "search_github": (("github", "github_issues"), "debugging"),
        "search_docs": (("installed_docs", "python_docs", "npm_docs"), "learning"),
        "search_knowledge_base": (("knowledge_base",), "learning"),
        "search_code": (("local_code",), "learning"),
    }
    # Sources with no tool of their own are not offered over MCP.
    assert source_info("web").mcp_tool is None and source_info("tavily_docs").mcp_tool is None


async def test_input_schemas_state_the_service_limits(tmp_path: Path) -> None:
    tools = await listed(tmp_path, None)
    question = tools["ask"].input_schema["properties"]["question"]
    assert question["maxLength"] == MAX_QUESTION_CHARS
    assert str(MAX_QUESTION_CHARS) in (tools["ask"].description or "")
    for name in search_tools():
        properties = tools[name].input_schema["properties"]
        assert properties["query"]["maxLength"] == MAX_QUERY_CHARS
        assert properties["limit"]["maximum"] == MAX_LIMIT and properties["limit"]["minimum"] == 1


async def test_arguments_over_a_limit_get_a_clear_error(tmp_path: Path) -> None:
    too_long = "x" * (MAX_QUESTION_CHARS + 1)
    with pytest.raises(InvalidQuestionError) as service_says:
        validate_question(too_long)
    async with chat_service(tmp_path) as chat, Client(build_server(lambda: chat)) as client:
        long_question = await client.call_tool("ask", {"question": too_long})
        bad_mode = await client.call_tool("ask", {"question": QUESTION, "mode": "fast-and-loose"})
        big_limit = await client.call_tool("search_docs", {"query": "open", "limit": 11})
        long_query = await client.call_tool("search_docs", {"query": "q" * (MAX_QUERY_CHARS + 1)})
        fine = await client.call_tool("search_docs", {"query": "open", "limit": MAX_LIMIT})
    # The words the service itself uses for the question, not pydantic's report.
    assert text_of(long_question) == (
        f"Error executing tool ask: invalid question: {service_says.value}"
    )
    assert f"the limit is {MAX_QUESTION_CHARS:,}" in text_of(long_question)
    assert "invalid mode: Input should be 'pipeline' or 'librarian'" in text_of(bad_mode)
    assert "invalid limit: " in text_of(big_limit) and str(MAX_LIMIT) in text_of(big_limit)
    assert "invalid query: " in text_of(long_query) and str(MAX_QUERY_CHARS) in text_of(long_query)
    for result in (long_question, bad_mode, big_limit, long_query):
        text = text_of(result)
        assert result.is_error and result.structured_content is None
        # A rejected value is the caller's data: it is never quoted back.
        assert "validation error" not in text and "input_value" not in text
        assert "xxxxxxxxxx" not in text and "fast-and-loose" not in text and "qqqqq" not in text
    assert not fine.is_error
