"""How often the Stack Overflow source finds the post a question came from, with no model.

Serves StackEval's posts as the loopback Stack Exchange API and searches each one as a
user asks it: its title only, and as a pasted post (the pipeline's search form and its
variations). Prints the share of questions whose own post is among the top results and
the longest `q`/`title` sent.

    .venv/bin/python bench/stackoverflow_origin.py \
        --corpus ../shared/data/intent/stackeval/stack-eval.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from codeweaver.agent.queries import query_variations, search_form
from codeweaver.evaluation.stackexchange_corpus import Corpus, question_id_of
from codeweaver.evaluation.stackexchange_loopback import StackExchangeLoopback, serve_loopback
from codeweaver.sources.stackoverflow import StackOverflowSource


async def measure(url: str, rows: list[dict[str, str]], limit: int) -> dict[str, int]:
    source = StackOverflowSource(base_url=url)
    hits = {"title": 0, "post": 0}
    for row in rows:
        own = f"stackoverflow:q{question_id_of(row['questionId'])}"
        title = row["question"].split("\n", 1)[0]
        found = await source.search(title, "learning", limit)
        hits["title"] += any(r["reference"].split("/")[0] == own for r in found)
        form = search_form(row["question"])
        found = []
        for query in query_variations(form, row["question"], None):
            found += await source.search(query, "debugging", limit)
        hits["post"] += any(r["reference"].split("/")[0] == own for r in found)
    await source.aclose()
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="StackEval JSONL")
    parser.add_argument("--limit", type=int, default=5, help="results per search")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines()]
    loopback = StackExchangeLoopback(Corpus.load(args.corpus), quota_max=10**6)
    with serve_loopback(loopback) as url:
        hits = asyncio.run(measure(url, rows, args.limit))
    sent = [v for r in loopback.requests for k, v in r.params.items() if k in ("q", "title")]
    for mode, count in hits.items():
        print(f"asked as {mode}: own post in the top {args.limit} for {count}/{len(rows)}")
    print(f"longest q/title sent: {max(map(len, sent))} characters ({len(sent)} requests)")


if __name__ == "__main__":
    main()
