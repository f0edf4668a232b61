"""The sources a draft cites have a channel of their own; the search's results stay whole.

`filtered_results` is what the search subgraph kept: every draft, rewrites included, is
written from it. `cited_sources` is what `generate_answer` numbered the draft against,
and what `check_answer` grades and returns.
"""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.nodes.answer import generate_answer
from codeweaver.agent.nodes.check import check_answer
from codeweaver.agent.state import GraphState, SearchResult
from tests.fakes import doc, make_deps

QUESTION = 'Python "extend" for a dictionary'
# The embedded model's bare answer to it (CoNaLa 577234, CC BY-SA 4.0), shortened.
EXTEND_ANSWER = """You can achieve a similar effect by using the `update` method.

```python
my_dict = {'a': 1, 'b': 2}
my_dict.update({'c': 3})
```"""


def api_page(api: str, kind: str) -> SearchResult:
    return SearchResult(
        title=f"{api} — Python 3.11.7",
        url=f"https://docs.python.org/3.11/library/x.html#{api}",
        snippet=f"The documentation of {api}, as its docstring gives it.",
        source="installed_docs",
        score=0.3,
        api=api,
        api_kind=kind,
    )


def found() -> list[SearchResult]:
    """One page for the prompt, then two API pages cited only where the code uses them."""
    return [
        doc(1),
        api_page("builtins.list.extend", "method"),
        api_page("builtins.dict.update", "method"),
    ]


async def test_a_draft_writes_its_cited_sources_and_leaves_the_search_s_results(
    tmp_path: Path,
) -> None:
    deps, _ = make_deps(tmp_path, {"generate_answer": EXTEND_ANSWER})
    state: GraphState = {"question": QUESTION, "filtered_results": found()}
    update = await generate_answer(state, deps)
    assert "filtered_results" not in update
    cited = update["cited_sources"]
    assert [s["url"] for s in cited[:1]] == [doc(1)["url"]]
    assert [s.get("api") for s in cited[1:]] == ["builtins.dict.update"]
    assert "[2]" in update["answer"]


async def test_a_rewrite_is_written_from_every_result_not_the_first_draft_s_citations(
    tmp_path: Path,
) -> None:
    deps, _ = make_deps(tmp_path, {"generate_answer": EXTEND_ANSWER})
    # The first draft cited only the prose page; the rewrite may still cite an API page.
    state: GraphState = {
        "question": QUESTION,
        "filtered_results": found(),
        "cited_sources": [doc(1)],
        "answer_attempt": 1,
        "answer_feedback": "a cited claim contradicts its source",
    }
    update = await generate_answer(state, deps)
    assert update["answer_attempt"] == 2
    assert [s.get("api") for s in update["cited_sources"]] == [None, "builtins.dict.update"]


async def test_a_failed_draft_gives_every_result_it_had(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})  # no reply scripted: the model call fails
    state: GraphState = {"question": QUESTION, "filtered_results": found()}
    update = await generate_answer(state, deps)
    assert update["answer_failed"] is True
    assert update["cited_sources"] == found()


async def test_the_check_grades_and_returns_the_cited_sources(tmp_path: Path) -> None:
    deps, _ = make_deps(tmp_path, {})
    state: GraphState = {
        "question": "How do I read a file line by line?",
        "answer": "Iterate over the lines of a file with a for loop [1].",
        "filtered_results": found(),
        "cited_sources": [doc(1)],
        "answer_attempt": 1,
    }
    update = await check_answer(state, deps)
    assert update["sources"] == [doc(1)]
    assert update["answer"].startswith("Iterate over the lines of a file with a for loop [1].")
