"""Search tools give agents what was found: each source's ranked list with scores and no
relevance bar unless `min_score` asks for one, how fresh each index is, what was left out,
and what to try when nothing was found; the answer pipeline keeps its bar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from codeweaver.mcp_server.search import RANKED_DEPTH, RanksWithoutBar
from codeweaver.mcp_server.server import build_server
from codeweaver.sources.base import Source
from codeweaver.vocabulary import Intent, SearchResult
from tests.fakes import FakeSource, doc
from tests.unit.mcp_server.helpers import QUESTION, chat_service
from tests.unit.mcp_server.test_structured import validate

SCORES = [0.9, 0.6, 0.3, 0.12, 0.1, 0.08, 0.07, 0.06, 0.05, 0.04, 0.03, 0.02]
HOLDS = "CodeWeaver's own environment, Python 3.11.7, 3 distributions, 100 entries"


class BarredDocs(FakeSource):
    """A docs source with a relevance bar, as the installed docs: `search` (the answer
    pipeline's) keeps results scoring 0.5 or more, `ranked` gives them all."""

    def __init__(self, results: list[SearchResult], built: datetime | None = None) -> None:
        super().__init__("installed_docs", results)
        self.ranked_asked: list[int] = []
        self.built = built or datetime.now(UTC) - timedelta(days=3, hours=1)

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        found = await super().search(query, intent, len(self.results))
        return [r for r in found if (r["score"] or 0) >= 0.5][:limit]

    async def ranked(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        self.ranked_asked.append(limit)
        return list(self.per_query.get(query, self.results))[:limit]

    def describe_index(self) -> tuple[datetime, str] | None:
        return self.built, HOLDS


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def call(
    tmp_path: Path, sources: list[Source], tool: str, arguments: dict[str, Any]
) -> tuple[CallToolResult, dict[str, Any]]:
    """The call's result and its structured content, checked against the listed schema."""
    async with (
        chat_service(tmp_path, sources) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool(tool, arguments)
    return result, validate(tools[tool], result)


def ranked_docs() -> BarredDocs:
    return BarredDocs([doc(n, score) for n, score in enumerate(SCORES, 1)])


async def test_search_docs_gives_the_ranked_list_with_scores_by_default(tmp_path: Path) -> None:
    docs = ranked_docs()
    assert isinstance(docs, RanksWithoutBar)
    result, content = await call(tmp_path, [docs], "search_docs", {"query": "read", "limit": 3})
    text = text_of(result)
    # No bar: 0.3 is below the fake's 0.5, and shown; the pipeline's `search` is not asked.
    assert [r["score"] for r in content["results"]] == [0.9, 0.6, 0.3]
    assert docs.ranked_asked == [RANKED_DEPTH] and docs.queries == []
    assert "url: https://docs.example/3\nscore: 0.300\nreference: python:doc3@3.11" in text
    assert content["min_score"] is None
    # What the limit left out (the source was read 20 deep and had 12).
    assert content["cut"] == [{
        "source": "installed_docs", "below_min_score": 0, "best_below": None,
        "beyond_limit": 9, "more_unread": False,
    }]  # fmt: skip
    assert (
        "\ncut: installed_docs: 9 more beyond limit 3 not shown; raise limit (up to 10) to see "
        "more\n"
    ) in text
    # How fresh the index is, first in the text.
    (index,) = content["index"]
    assert index["source"] == "installed_docs" and index["holds"] == HOLDS
    assert index["built_at"] == docs.built.isoformat(timespec="seconds")
    assert 3 * 86_400 + 3_600 <= index["age_seconds"] < 3 * 86_400 + 3_700
    built = docs.built.strftime("%Y-%m-%d %H:%M:%S")
    assert text.startswith(f"index: installed_docs index built {built} UTC (3 days ago): {HOLDS}\n")
    assert content["suggestion"] == "" and "suggestion:" not in text


async def test_min_score_applies_a_bar_and_says_what_it_cut(tmp_path: Path) -> None:
    arguments = {"query": "read", "limit": 5, "min_score": 0.5}
    result, content = await call(tmp_path, [ranked_docs()], "search_docs", arguments)
    assert [r["score"] for r in content["results"]] == [0.9, 0.6]
    assert content["min_score"] == 0.5
    assert content["cut"] == [{
        "source": "installed_docs", "below_min_score": 10, "best_below": 0.3,
        "beyond_limit": 0, "more_unread": False,
    }]  # fmt: skip
    text = text_of(result)
    assert "cut: installed_docs: 10 results below min_score 0.5 (the best 0.300) not shown" in text
    assert text.count("\nscore: ") == 2


async def test_a_source_read_to_the_depth_may_rank_more(tmp_path: Path) -> None:
    many = BarredDocs([doc(n, 0.9 - n / 100) for n in range(1, 31)])
    result, content = await call(tmp_path, [many], "search_docs", {"query": "read", "limit": 10})
    assert len(content["results"]) == 10
    assert content["cut"][0]["beyond_limit"] == RANKED_DEPTH - 10
    assert content["cut"][0]["more_unread"] is True
    assert f"cut: installed_docs: {RANKED_DEPTH - 10}+ more beyond limit 10 not shown" in (
        text_of(result)
    )


@pytest.mark.parametrize(
    ("arguments", "suggestion"),
    [
        (
            {"query": "read", "min_score": 0.95},
            "nothing scored 0.95 or more (the best scored 0.900): lower min_score, or leave "
            "it out for the whole ranked list",
        ),
        (
            {"query": "nothing like it"},
            "nothing found: try the API's name (e.g. `json.loads`), a shorter query with only "
            "its key words, or `ask` for an answer from every source",
        ),
    ],
)
async def test_zero_hits_come_with_a_suggestion(
    tmp_path: Path, arguments: dict[str, Any], suggestion: str
) -> None:
    docs = ranked_docs()
    if arguments["query"] == "nothing like it":
        docs.results = []
    result, content = await call(tmp_path, [docs], "search_docs", arguments)
    assert not result.is_error and content["results"] == []
    assert content["suggestion"] == suggestion
    text = text_of(result)
    assert text.startswith("index: installed_docs index built ")
    assert "\n\nNo results.\n" in text and text.endswith(f"\nsuggestion: {suggestion}\n")


@pytest.mark.parametrize("value", [-0.1, 1.5, "high"])
async def test_a_min_score_out_of_range_is_a_tool_error(tmp_path: Path, value: object) -> None:
    async with (
        chat_service(tmp_path, [ranked_docs()]) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        bad = await client.call_tool("search_docs", {"query": "read", "min_score": value})
        good = await client.call_tool("search_docs", {"query": "read", "min_score": 1})
    assert bad.is_error and "invalid min_score" in text_of(bad)
    assert str(value) not in text_of(bad)  # the caller's value is never quoted
    assert not good.is_error
    for name, tool in tools.items():
        if name.startswith("search_"):
            schema = tool.input_schema["properties"]["min_score"]
            assert {"minimum": 0.0, "maximum": 1.0, "type": "number"} in schema["anyOf"]


async def test_a_source_without_a_ranked_list_is_searched_as_before(tmp_path: Path) -> None:
    results = [{**doc(n, score), "source": "stackoverflow"} for n, score in ((1, 0.7), (2, 0.2))]
    plain = FakeSource("stackoverflow", results=results)
    arguments = {"query": "q", "limit": 2, "min_score": 0.5}
    result, content = await call(tmp_path, [plain], "search_stackoverflow", arguments)
    assert plain.queries == ["q"]
    assert [r["score"] for r in content["results"]] == [0.7]
    assert content["index"] == [] and not text_of(result).startswith("index:")
    assert content["cut"][0]["below_min_score"] == 1
    assert content["cut"][0]["more_unread"] is True  # asked for 2 and got 2


async def test_the_answer_pipeline_keeps_the_bar(tmp_path: Path) -> None:
    docs = ranked_docs()
    result, content = await call(tmp_path, [docs], "ask", {"question": QUESTION})
    assert not result.is_error and docs.queries  # the pipeline searched...
    assert docs.ranked_asked == []  # ...with the bar: never the ranked list
    assert {s["title"] for s in content["sources"]} <= {"doc 1", "doc 2"}
