"""Recall of the MCP `search_docs` tool on CoNaLa, measured through the tool itself.

The tool is called as a coding agent calls it: the real MCP server (`build_server` over
the service every door opens, `open_service`) through the SDK's in-process client,
`search_docs(query, limit=k)`, and the first k results of its structured content are
judged by the rule of `codeweaver eval retrieval` (`retrieval_eval`: a hit documents an
API the reference snippet uses), on the same questions. In the same run the installed-docs
ranking itself is judged as `eval retrieval` judges it, on the tool's own source (so both
see one index and one set of vectors): without its relevance bar (what `--no-threshold`
measures) and with it. The tool is also called with `min_score` at the pipeline's bar,
which should give the ranking's figure with the bar.

    .venv/bin/python -m codeweaver_eval.mcp_retrieval [--part odd] [--k 5] [--sample N]

The docs index and its vectors are made first (`ensure_index`, as `eval retrieval` does).
`--no-wait` ranks with the vectors made so far instead (the most called entries' first):
embedding waits while a local model computes an answer on this machine, so a build can
stall for as long as other runs keep the model busy. The report says which vectors ranked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver_eval.repository import SHARED_DATA
from codeweaver_eval.retrieval_eval import (
    RetrievalQuestion,
    Search,
    evaluate_retrieval,
    load_questions,
)

if TYPE_CHECKING:
    from mcp import Client

CONALA = SHARED_DATA / "retrieval" / "conala" / "conala-train.json"
TOOL = "search_docs"
# The acceptance margin: recall@k through the tool against the ranking without the bar.
MARGIN = 0.02
Progress = Callable[[str, int, int], None]


@dataclass
class Collected:
    """What one way of searching returned for each question (by its query)."""

    found: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    errors: int = 0  # tool calls answered with a tool error
    results: int = 0
    scored: int = 0  # results whose structured content carries a numeric score
    with_index: int = 0  # replies that say how fresh the index is
    seconds: float = 0.0

    def search(self) -> Search:
        """The collected replies as the `search(query, k)` `evaluate_retrieval` calls."""

        def search(query: str, k: int) -> list[Any]:
            return self.found.get(query, [])[:k]

        return search


async def call_tool(
    client: Client, query: str, k: int, into: Collected, min_score: float | None = None
) -> None:
    """`search_docs(query, limit=k[, min_score])` through `client`, kept in `into`."""
    arguments: dict[str, Any] = {"query": query, "limit": k}
    if min_score is not None:
        arguments["min_score"] = min_score
    started = time.perf_counter()
    reply = await client.call_tool(TOOL, arguments)
    into.seconds += time.perf_counter() - started
    content = reply.structured_content if not reply.is_error else None
    if not isinstance(content, dict):
        into.errors += 1
        into.found[query] = []
        return
    items = [item for item in content.get("results") or [] if isinstance(item, dict)]
    into.found[query] = items
    into.results += len(items)
    into.scored += sum(isinstance(item.get("score"), int | float) for item in items)
    into.with_index += bool(content.get("index"))


async def measure(
    questions: Sequence[RetrievalQuestion], k: int, progress: Progress, *, wait: bool = True
) -> dict[str, Any]:
    """Every figure of the report, in one run over one index."""
    from mcp import Client

    from codeweaver.api.startup import open_service
    from codeweaver.config import Settings
    from codeweaver.factory import build_deps, prepare_sources
    from codeweaver.mcp_server.search import search_tools
    from codeweaver.mcp_server.server import build_server
    from codeweaver.sources.installed_docs import InstalledDocsSource
    from codeweaver.sources.installed_docs.ranking import SCORE_THRESHOLD

    # The tool's own sources only; a scripted model, since no answer is written.
    settings = Settings(
        model="scripted:echo",
        enabled_sources=",".join(search_tools()[TOOL].sources),
        cache_enabled=False,
        code_check=False,
    )
    deps = build_deps(settings)
    served = deps.sources.get("installed_docs")
    if not isinstance(served, InstalledDocsSource):
        raise SystemExit("the installed_docs source is not enabled")
    prepare_sources(deps)
    if wait:
        served.ensure_index(progress)
    else:  # the vectors made so far: the most called entries' first (`early_vectors`)
        served.search_sync("read a file", 1)
    vectors = served.building() or "every entry embedded"
    # The ranking is asked on the tool's own source, question by question beside the
    # tool, so both see the same index and vectors; `search_sync(bar=False)` is what
    # `eval retrieval --no-threshold` runs.
    tool, tool_bar, ranking, ranking_bar = Collected(), Collected(), Collected(), Collected()
    async with (
        open_service(settings, deps=deps, prepared=True) as startup,
        Client(build_server(startup.service, settings=settings)) as client,
    ):
        for done, question in enumerate(questions, 1):
            query = question.intent
            await call_tool(client, query, k, tool)
            await call_tool(client, query, k, tool_bar, SCORE_THRESHOLD)
            ranking.found[query] = [dict(r) for r in served.search_sync(query, k, bar=False)]
            ranking_bar.found[query] = [dict(r) for r in served.search_sync(query, k)]
            if done % 100 == 0 or done == len(questions):
                progress(TOOL, done, len(questions))
    catalogue = served.catalogue()

    def judged(run: Collected) -> dict[str, Any]:
        return evaluate_retrieval(questions, run.search(), catalogue, k=k).to_dict()

    figures: dict[str, Any] = {
        "vectors": vectors,
        "vectors_after": served.building() or "every entry embedded",
        "index": _described(served.describe_index()),
        "ranking_no_bar": judged(ranking),
        "ranking_bar": judged(ranking_bar),
    }
    for label, run in (("tool", tool), ("tool_min_score", tool_bar)):
        figures[label] = {
            **judged(run),
            "tool_errors": run.errors,
            "results": run.results,
            "scored_share": run.scored / run.results if run.results else 0.0,
            "replies_with_index": run.with_index,
            "seconds_per_call": run.seconds / len(questions) if questions else 0.0,
        }
    figures["tool_min_score"]["min_score"] = SCORE_THRESHOLD
    return figures


def _described(described: tuple[datetime, str] | None) -> str:
    return (
        f"built {described[0].isoformat(timespec='seconds')}: {described[1]}" if described else ""
    )


def verdict(figures: dict[str, Any]) -> dict[str, Any]:
    """Whether recall@k through the tool is within `MARGIN` of the ranking without the
    bar, every result carrying its score."""
    tool, ranking = figures["tool"], figures["ranking_no_bar"]
    delta = tool["recall_at_k"] - ranking["recall_at_k"]
    scored = tool["scored_share"] == 1.0 or tool["results"] == 0
    return {"delta": delta, "passed": abs(delta) <= MARGIN and scored, "margin": MARGIN}


def summary_lines(figures: dict[str, Any], questions: int, part: str, k: int) -> list[str]:
    rows = [
        ("tool search_docs (no bar)", "tool"),
        (f"tool search_docs (min_score {figures['tool_min_score']['min_score']:g})",
         "tool_min_score"),
        ("ranking without the bar (eval retrieval --no-threshold)", "ranking_no_bar"),
        ("ranking with the bar (eval retrieval)", "ranking_bar"),
    ]  # fmt: skip
    lines = [
        f"{questions} CoNaLa questions (part {part}), k={k}",
        f"  index {figures['index']}",
        f"  vectors: {figures['vectors']}"
        + (
            f" (after: {figures['vectors_after']})"
            if figures["vectors_after"] != figures["vectors"]
            else ""
        ),
    ]
    for label, key in rows:
        row = figures[key]
        extra = ""
        if key.startswith("tool"):
            extra = (
                f"  scored {row['scored_share']:.0%}  index noted {row['replies_with_index']}"
                f"/{questions}  errors {row['tool_errors']}  {row['seconds_per_call']:.3f} s/call"
            )
        lines.append(
            f"  {label:58} recall@{k} {row['recall_at_k']:.3f}  MRR {row['mrr']:.3f}  "
            f"nothing {row['empty_share']:.1%}{extra}"
        )
    check = verdict(figures)
    lines.append(
        f"  tool - ranking without the bar: {check['delta']:+.3f} "
        f"({'within' if check['passed'] else 'NOT within'} {check['margin']})"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=CONALA)
    parser.add_argument("--part", choices=["all", "even", "odd"], default="odd")
    parser.add_argument("--k", type=int, default=5, choices=range(1, 11), metavar="1-10")
    parser.add_argument("--sample", type=int, default=None, help="N questions at random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="rank with the vectors made so far instead of waiting for the build",
    )
    args = parser.parse_args(argv)
    questions = load_questions(args.file, part=args.part, sample=args.sample, seed=args.seed)

    def progress(phase: str, done: int, total: int) -> None:
        sys.stderr.write(f"{phase}: {done}/{total}\n")

    figures = asyncio.run(measure(questions, args.k, progress, wait=not args.no_wait))
    report = {
        "date": datetime.now(UTC).date().isoformat(),
        "file": str(args.file),
        "part": args.part,
        "questions": len(questions),
        "k": args.k,
        "figures": figures,
        "verdict": verdict(figures),
    }
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(summary_lines(figures, len(questions), args.part, args.k)))
        sys.stdout.write("\n")
    return 0 if report["verdict"]["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
