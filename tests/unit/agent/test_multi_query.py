"""Multi-query retrieval and the web fallback."""

from __future__ import annotations

import json
from pathlib import Path

from codeweaver.agent.rules.queries import error_query, query_variations
from codeweaver.agent.runner import Assistant
from codeweaver.sources.base import SourceError
from tests.fakes import FakeSource, doc, docs, make_deps
from tests.unit.agent.test_graph_routes import base_script

KOREAN = "파이썬에서 파일을 한 줄씩 읽는 방법"
ENGLISH = "how to read a file line by line in python"
TRACEBACK = """Why does this fail?
```
Traceback (most recent call last):
  File "app.py", line 3, in <module>
    print(row["id"])
KeyError: 'id'
```"""


def test_a_korean_query_is_also_searched_in_english() -> None:
    assert query_variations(KOREAN, KOREAN, ENGLISH) == [KOREAN, ENGLISH]


def test_an_english_query_is_not_paraphrased() -> None:
    assert query_variations(ENGLISH, ENGLISH, ENGLISH) == [ENGLISH]
    assert query_variations(ENGLISH, ENGLISH, "read file lines python") == [ENGLISH]


def test_the_error_line_of_a_traceback_is_a_query_of_its_own() -> None:
    assert error_query(TRACEBACK) == "KeyError: 'id'"
    assert error_query("raises requests.exceptions.ConnectionError") == (
        "requests.exceptions.ConnectionError"
    )
    assert error_query("How do I sort a list?") is None
    assert query_variations(TRACEBACK, TRACEBACK, None) == [
        " ".join(TRACEBACK.split()),
        "KeyError: 'id'",
    ]
    # Already (nearly) the query: nothing to add.
    assert query_variations("KeyError: 'id' in pandas", "KeyError: 'id' in pandas", None) == [
        "KeyError: 'id' in pandas"
    ]


def test_at_most_three_distinct_queries() -> None:
    message = f"{KOREAN} ValueError: bad"
    found = query_variations(message, message, ENGLISH)
    assert found == [message, ENGLISH, "ValueError: bad"]
    assert len(query_variations("x", "x", "x")) == 1


def _analyze(canonical: str) -> str:
    return json.dumps({"canonical_question": canonical})


async def test_each_source_searches_every_variation_and_merges(tmp_path: Path) -> None:
    source = FakeSource(per_query={KOREAN: [doc(1)], ENGLISH: [doc(1), doc(2), doc(3)]})
    deps, _ = make_deps(tmp_path, base_script(analyze_question=_analyze(ENGLISH)), [source])
    result = await Assistant(deps).ask(KOREAN)

    assert sorted(source.queries) == sorted([KOREAN, ENGLISH])
    # doc 1 came back for both queries: kept once.
    assert [s["url"] for s in result.sources] == [d["url"] for d in docs(3)]
    act = next(
        s for s in result.steps if s["node"] == "search_official_docs" and s["kind"] == "act"
    )
    assert act["data"]["queries"] == [KOREAN, ENGLISH]


async def test_a_failing_variation_does_not_lose_the_others(tmp_path: Path) -> None:
    class HalfBroken(FakeSource):
        async def search(self, query: str, intent: str, limit: int) -> list:  # type: ignore[override]
            if query == KOREAN:
                self.queries.append(query)
                raise SourceError("engine rejected the query")
            return await super().search(query, intent, limit)  # type: ignore[arg-type]

    source = HalfBroken()
    deps, _ = make_deps(tmp_path, base_script(analyze_question=_analyze(ENGLISH)), [source])
    result = await Assistant(deps).ask(KOREAN)

    node_steps = [s for s in result.steps if s["node"] == "search_official_docs"]
    assert [s["kind"] for s in node_steps] == ["act", "error", "observe"]
    assert "engine rejected the query" in node_steps[1]["message"]
    assert len(result.sources) == 3


async def test_the_web_is_searched_when_fewer_than_three_documents_come_back(
    tmp_path: Path,
) -> None:
    docs_source = FakeSource(results=[doc(1)])
    web = FakeSource("web", results=[doc(7), doc(8)])
    deps, _ = make_deps(tmp_path, base_script(), [docs_source, web])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")

    assert web.queries == ["How do I read a file line by line in Python?"]
    assert {s["url"] for s in result.sources} == {doc(n)["url"] for n in (1, 7, 8)}
    messages = [s["message"] for s in result.steps if s["node"] == "collect_results"]
    assert messages == ["1 results", "too few documents: searching the web", "3 results"]


async def test_the_web_is_not_searched_when_enough_came_back(tmp_path: Path) -> None:
    web = FakeSource("web", results=[doc(7)])
    deps, _ = make_deps(tmp_path, base_script(), [FakeSource(), web])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    assert web.queries == []
    skipped = [s["message"] for s in result.steps if s["node"] == "search_web"]
    assert skipped == ["skipped: fallback: runs when fewer than 3 documents come back"]


async def test_the_web_fallback_runs_once_per_question(tmp_path: Path) -> None:
    web = FakeSource("web", results=[])
    script = base_script(refine_search='{"query": "read lines python"}')
    deps, _ = make_deps(tmp_path, script, [FakeSource(results=[]), web])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")

    assert len(web.queries) == 1  # not again after the refinement
    assert any(s["node"] == "refine_search" for s in result.steps)


async def test_without_a_web_source_the_steps_say_so(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, base_script(), [FakeSource(results=[doc(1)])])
    result = await Assistant(deps).ask("How do I read a file line by line in Python?")
    notes = [s["message"] for s in result.steps if s["node"] == "collect_results"]
    assert "no web fallback: web: not configured" in notes
