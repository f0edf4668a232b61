"""The measurement of recall through the `search_docs` tool (`codeweaver_eval.mcp_retrieval`):
what it collects from a real server's replies and how it judges them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from codeweaver.mcp_server.server import build_server
from codeweaver_eval.mcp_retrieval import Collected, call_tool, summary_lines, verdict
from codeweaver_eval.retrieval_eval import RetrievalQuestion, evaluate_retrieval
from tests.fakes import FakeSource, doc
from tests.unit.mcp_server.helpers import chat_service
from tests.unit.mcp_server.test_ranked_search import BarredDocs

# CoNaLa-like questions: the first one's snippet uses `re.split`, the second's `zip`.
QUESTIONS = [
    RetrievalQuestion(1, "split a string on whitespace", ("re.split('\\\\s+', s)",)),
    RetrievalQuestion(3, "pair two lists", ("list(zip(a, b))",)),
]
CATALOGUE = {"re.split": "python", "builtins.zip": "python", "builtins.sorted": "python"}


def _docs() -> BarredDocs:
    split = {**doc(1, 0.2), "reference": "python:re.split@3.11"}
    zipped = {**doc(2, 0.1), "reference": "python:builtins.sorted@3.11"}
    docs = BarredDocs([split, zipped])
    docs.per_query = {QUESTIONS[0].intent: [split], QUESTIONS[1].intent: [zipped]}
    return docs


async def test_the_tool_s_replies_are_judged_by_the_retrieval_rule(tmp_path: Path) -> None:
    async with (
        chat_service(tmp_path, [_docs()]) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        plain, barred = Collected(), Collected()
        for question in QUESTIONS:
            await call_tool(client, question.intent, 5, plain)
            await call_tool(client, question.intent, 5, barred, min_score=0.15)
    assert plain.errors == 0 and plain.results == 2 and plain.scored == 2
    assert plain.with_index == 2  # each reply said how fresh the index is
    report = evaluate_retrieval(QUESTIONS, plain.search(), CATALOGUE, k=5).to_dict()
    assert report["recall_at_k"] == 0.5  # `re.split` is a hit, `sorted` is not `zip`
    assert barred.results == 1  # `sorted` scored 0.1, below 0.15
    assert (
        evaluate_retrieval(QUESTIONS, barred.search(), CATALOGUE, k=5).to_dict()["empty_share"]
        == 0.5
    )


async def test_a_tool_error_counts_as_nothing_found(tmp_path: Path) -> None:
    broken = FakeSource(error=RuntimeError("index gone"))
    async with (
        chat_service(tmp_path, [broken]) as chat,
        Client(build_server(lambda: chat)) as client,
    ):
        run = Collected()
        await call_tool(client, QUESTIONS[0].intent, 5, run)
    assert run.errors == 1 and run.search()(QUESTIONS[0].intent, 5) == []


def test_the_verdict_wants_the_tool_within_the_margin_with_every_score() -> None:
    def figures(tool: float, scored: float) -> dict[str, Any]:
        row = {"recall_at_k": tool, "mrr": 0.4, "empty_share": 0.0, "scored_share": scored,
               "results": 10, "replies_with_index": 3, "tool_errors": 0,
               "seconds_per_call": 0.01}  # fmt: skip
        return {
            "index": "built 2026-11-28T11:39:10+00:00: CodeWeaver's own environment",
            "vectors": "every entry embedded",
            "vectors_after": "every entry embedded",
            "tool": row,
            "tool_min_score": {**row, "min_score": 0.13},
            "ranking_no_bar": {**row, "recall_at_k": 0.567},
            "ranking_bar": {**row, "recall_at_k": 0.24},
        }

    assert verdict(figures(0.567, 1.0))["passed"]
    assert verdict(figures(0.55, 1.0))["passed"]
    assert not verdict(figures(0.54, 1.0))["passed"]
    assert not verdict(figures(0.567, 0.9))["passed"]  # a result without its score
    lines = summary_lines(figures(0.567, 1.0), 3, "odd", 5)
    assert lines[:3] == [
        "3 CoNaLa questions (part odd), k=5",
        "  index built 2026-11-28T11:39:10+00:00: CodeWeaver's own environment",
        "  vectors: every entry embedded",
    ]
    assert lines[-1] == "  tool - ranking without the bar: +0.000 (within 0.02)"
