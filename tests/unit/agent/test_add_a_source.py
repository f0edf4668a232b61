"""Adding a source takes one `@register_source` (with its `SourceInfo`) and one search-node
row, nothing else: the pipeline searches it, skips it where its row says so, the librarian
and the MCP server offer it as a tool, `doctor --live` checks it and `doctor` lists its key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent
from typer.testing import CliRunner

from codeweaver.agent.deps import Deps
from codeweaver.agent.librarian.tools import build_tools
from codeweaver.agent.runner import Assistant
from codeweaver.agent.search_nodes import SEARCH_NODES, SearchNode, add_search_node
from codeweaver.api.queue import RunQueue
from codeweaver.api.service import ChatService
from codeweaver.cli.app import app
from codeweaver.config import Settings
from codeweaver.factory import build_sources
from codeweaver.llm.scripted import Reply, ScriptedChatModel
from codeweaver.llm.structured import message_text
from codeweaver.mcp_server.server import build_server
from codeweaver.memory.sessions import open_thread_store
from codeweaver.sources.base import (
    McpTool,
    Source,
    SourceInfo,
    SourceStatus,
    register_source,
    unregister_source,
)
from codeweaver.vocabulary import SearchResult
from tests.fakes import FakeSource, make_deps

TICKET: SearchResult = {
    "title": "PROJ-12: KeyError 'id' when the payload has no id",
    "url": "https://jira.example/browse/PROJ-12",
    "snippet": "The KeyError 'id' comes from reading payload['id'] when the payload has no "
    "id; use payload.get('id') and handle the missing id.",
    "source": "jira",
    "score": 0.9,
}
SEARCHED: list[str] = []  # queries the registered source saw, across instances
JIRA_TOOL = McpTool(
    "search_jira",
    "Search Jira",
    "Search the team's Jira tickets. Best for known bugs of the team's own services.",
    intent="debugging",
)
JIRA_PROBE = "KeyError payload"  # a query the service surely has tickets for


class JiraSource(FakeSource):
    def __init__(self, ready: bool) -> None:
        super().__init__("jira", [TICKET])
        self.ready = ready

    def status(self) -> SourceStatus:
        return SourceStatus("ready") if self.ready else SourceStatus("skipped", "JIRA_URL not set")

    async def search(self, query: str, intent: object, limit: int) -> list[SearchResult]:
        SEARCHED.append(query)
        return [TICKET][:limit]


@pytest.fixture
def jira() -> Iterator[None]:
    """The whole addition: one decorator and one row (both undone after the test)."""
    info = SourceInfo(
        mcp_tool=JIRA_TOOL, probe_query=JIRA_PROBE, key="jira_token", key_required=True
    )

    @register_source("jira", info)
    def create_jira(settings: Settings) -> Source:
        return JiraSource(ready=settings.github_token is None)  # any setting can gate it

    add_search_node(
        SearchNode(
            "search_jira",
            ("jira",),
            "the team's Jira tickets; input: an error message or ticket words.",
            {"debugging": 1.0, "learning": 0.0, "code_review": 0.0},
        )
    )
    SEARCHED.clear()
    yield
    unregister_source("jira")
    del SEARCH_NODES["search_jira"]


def deps_with_registered_sources(
    tmp_path: Path, script: dict[str, Reply], **settings: object
) -> tuple[Deps, ScriptedChatModel]:
    """Sources built from the registry, as the app builds them, plus offline docs."""
    deps, llm = make_deps(tmp_path, script, sources=[FakeSource("installed_docs")], **settings)
    deps.sources = {**build_sources(deps.settings), "installed_docs": FakeSource("installed_docs")}
    return deps, llm


ANSWER_SCRIPT = {
    "generate_answer": "Use payload.get('id') and handle the missing id [1].",
    "check_answer": '{"unsupported": [], "answers_question": true}',
}


async def test_the_pipeline_searches_the_new_source_and_cites_it(
    jira: None, tmp_path: Path
) -> None:
    deps, _ = deps_with_registered_sources(tmp_path, ANSWER_SCRIPT)
    assert "jira" in deps.sources  # built from the registry like every built-in
    result = await Assistant(deps).ask("Why does my handler raise KeyError: 'id'?")
    assert SEARCHED, "the new node never searched its source"
    acts = [s for s in result.steps if s["node"] == "search_jira" and s["kind"] == "act"]
    assert len(acts) == 1
    assert TICKET["url"] in [s["url"] for s in result.sources]


async def test_its_row_skips_it_for_intents_it_does_not_serve(jira: None, tmp_path: Path) -> None:
    deps, _ = deps_with_registered_sources(tmp_path, ANSWER_SCRIPT)
    result = await Assistant(deps).ask("What is a context manager in Python?")
    assert SEARCHED == []
    skipped = [s["message"] for s in result.steps if s["node"] == "search_jira"]
    assert skipped == ["skipped: not used for learning questions"]


async def test_a_source_that_is_not_ready_is_skipped_with_its_reason(
    jira: None, tmp_path: Path
) -> None:
    deps, _ = deps_with_registered_sources(tmp_path, ANSWER_SCRIPT, github_token="t" * 20)
    result = await Assistant(deps).ask("Why does my handler raise KeyError: 'id'?")
    assert SEARCHED == []
    skipped = [s["message"] for s in result.steps if s["node"] == "search_jira"]
    assert skipped == ["skipped: jira: JIRA_URL not set"]


async def test_the_librarian_is_offered_the_new_source_as_a_tool(
    jira: None, tmp_path: Path
) -> None:
    steps = [
        json.dumps({"thought": "", "tool": "search_jira", "input": "KeyError id payload"}),
        json.dumps({"thought": "", "tool": "answer", "input": ""}),
    ]
    script = {
        "librarian_step": steps,
        "librarian_answer": "Use payload.get('id') and handle the missing id [1].",
        "check_answer": '{"unsupported": [], "answers_question": true}',
    }
    deps, llm = deps_with_registered_sources(tmp_path, script)
    assert build_tools(deps)["search_jira"].description.startswith("the team's Jira tickets")
    events = [e async for e in Assistant(deps).stream("Why KeyError 'id'?", "t1", "librarian")]
    result = events[-1].result
    assert result is not None
    first_prompt = message_text(next(m for task, m in llm.calls if task == "librarian_step")[0])
    assert "- search_jira: the team's Jira tickets" in first_prompt
    assert SEARCHED == ["KeyError id payload"]
    assert TICKET["url"] in [s["url"] for s in result.sources]


async def test_the_mcp_server_built_from_the_settings_offers_it_as_a_tool(
    jira: None, tmp_path: Path
) -> None:
    deps, _ = deps_with_registered_sources(tmp_path, ANSWER_SCRIPT, enabled_sources="jira")
    hidden = deps.settings.model_copy(update={"enabled_sources": "installed_docs"})
    async with open_thread_store(deps.settings) as store:
        assistant = Assistant(deps, checkpointer=store.checkpointer)
        chat = ChatService(assistant, store, RunQueue(1, 4))
        async with Client(build_server(lambda: chat, settings=deps.settings)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("search_jira", {"query": "KeyError id payload"})
        async with Client(build_server(lambda: chat, settings=hidden)) as client:
            without = {tool.name for tool in (await client.list_tools()).tools}
    assert set(tools) == {"ask", "search_jira"}  # the built-ins' sources are disabled here
    tool = tools["search_jira"]
    assert (tool.description or "").startswith(JIRA_TOOL.description)
    assert tool.annotations is not None and tool.annotations.title == "Search Jira"
    assert tool.annotations.open_world_hint is True  # not declared offline
    assert not result.is_error
    content = result.content[0]
    assert isinstance(content, TextContent) and TICKET["url"] in content.text
    assert SEARCHED == ["KeyError id payload"]
    assert "search_jira" not in without  # a disabled source's tool is not offered


def doctor_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`codeweaver doctor --live --json` with only the new source enabled."""
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "jira")  # the others are disabled: no network
    monkeypatch.chdir(tmp_path)  # no stray .env
    result = CliRunner().invoke(app, ["doctor", "--live", "--json"])
    assert result.exit_code == 0, result.output
    assert "jira-secret" not in result.stdout
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_doctor_checks_it_live_and_lists_its_key(
    jira: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JIRA_TOKEN", raising=False)
    keyless = doctor_json(tmp_path, monkeypatch)
    assert keyless["keys"]["JIRA_TOKEN"] is False
    [live] = [r for r in keyless["live"] if r["source"] == "jira"]
    assert (live["result"], live["reason"]) == ("not configured", "JIRA_TOKEN not set")
    assert SEARCHED == []  # a source without the key it needs is not called

    monkeypatch.setenv("JIRA_TOKEN", "jira-secret")
    keyed = doctor_json(tmp_path, monkeypatch)
    assert keyed["keys"]["JIRA_TOKEN"] is True
    [live] = [r for r in keyed["live"] if r["source"] == "jira"]
    assert live["result"] == "ok" and live["results"] == 1 and live["query"] == JIRA_PROBE
    assert SEARCHED == [JIRA_PROBE]
