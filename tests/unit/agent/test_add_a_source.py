"""Adding a source takes one `@register_source` and one search-node row, nothing else:
the pipeline searches it, skips it where its row says so, and the librarian offers it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.agent.deps import Deps
from codeweaver.agent.librarian.tools import build_tools
from codeweaver.agent.runner import Assistant
from codeweaver.agent.search_nodes import SEARCH_NODES, SearchNode, add_search_node
from codeweaver.config import Settings
from codeweaver.factory import build_sources
from codeweaver.llm.scripted import Reply, ScriptedChatModel
from codeweaver.llm.structured import message_text
from codeweaver.sources.base import SOURCES, Source, SourceStatus, register_source
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

    @register_source("jira")
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
    SOURCES.unregister("jira")
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
