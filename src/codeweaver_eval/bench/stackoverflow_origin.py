"""How often the Stack Overflow source finds the post a question came from, with no model.

Serves StackEval's posts as the loopback Stack Exchange API and searches each one as a
user asks it: its title only, and as a pasted post (the pipeline's search form and its
variations). With `--distractors DIR` it measures twice in one run, StackEval alone and
StackEval beside the other public post sets of DIR (about 10,000 posts in all), and
prints for each: the share of questions whose own post is among the source's top
results, its median place there, its median place in the API's own ranking, and the
longest `q`/`title` sent.

    .venv/bin/python -m codeweaver_eval.bench.stackoverflow_origin \
        --corpus ../shared/data/intent/stackeval/stack-eval.jsonl --distractors ../shared/data
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path
from typing import Any

from codeweaver.agent.rules.queries import query_variations, search_form
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver_eval.stackexchange.corpus import Corpus, Post, question_id_of
from codeweaver_eval.stackexchange.distractors import load_distractors
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback


def _place(found: list[Any], own: str) -> int | None:
    refs = [r["reference"].split("/")[0] for r in found]
    return refs.index(own) + 1 if own in refs else None


async def measure(
    url: str, loopback: StackExchangeLoopback, rows: list[dict[str, Any]], limit: int
) -> dict[str, dict[str, list[int | None]]]:
    source = StackOverflowSource(base_url=url)
    places: dict[str, dict[str, list[int | None]]] = {
        mode: {"source": [], "api": [], "returned": []} for mode in ("title", "post")
    }
    for row in rows:
        own = f"stackoverflow:q{question_id_of(row['questionId'])}"
        asked = {"title": [row["question"].split("\n", 1)[0]]}
        asked["post"] = query_variations(search_form(row["question"]), row["question"], None)
        for mode, queries in asked.items():
            start = len(loopback.requests)
            found = []
            for query in queries:
                found += await source.search(query, "debugging", limit)
            found.sort(key=lambda r: r.get("score") or 0.0, reverse=True)
            seen = loopback.requests_since(start)
            api = [rank for r in seen for ref, rank in r.ranks() if ref == own]
            # How many posts the searches returned: the competition the question met.
            returned = {i for r in seen if r.ranks() for i in r.question_ids}
            places[mode]["source"].append(_place(found, own))
            places[mode]["api"].append(min(api, default=None))
            places[mode]["returned"].append(len(returned))
    await source.aclose()
    return places


def _median(values: list[int | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{statistics.median(known):g}" if known else "—"


def run(posts: list[Post], rows: list[dict[str, Any]], limit: int, label: str) -> None:
    loopback = StackExchangeLoopback(Corpus(posts), quota_max=10**6)
    with serve_loopback(loopback) as url:
        places = asyncio.run(measure(url, loopback, rows, limit))
    sent = [v for r in loopback.requests for k, v in r.params.items() if k in ("q", "title")]
    print(f"{label}: {len(posts)} posts served")
    for mode, found in places.items():
        top = sum(1 for p in found["source"] if p is not None)
        print(
            f"  asked as {mode}: own post in the top {limit} for {top}/{len(rows)}; "
            f"median place {_median(found['source'])} among the results, "
            f"{_median(found['api'])} in the API's ranking; "
            f"posts returned per question: median {_median(found['returned'])}, "
            f"at least 2 for {sum(1 for n in found['returned'] if (n or 0) >= 2)}"
        )
    print(f"  longest q/title sent: {max(map(len, sent))} characters ({len(sent)} requests)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="StackEval JSONL")
    parser.add_argument("--distractors", type=Path, help="shared data folder (other sets)")
    parser.add_argument("--limit", type=int, default=5, help="results per search")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines()]
    posts = Corpus.load(args.corpus).posts
    run(posts, rows, args.limit, "StackEval alone")
    if args.distractors:
        extra = load_distractors(args.distractors)
        run([*posts, *extra.posts], rows, args.limit, f"with distractors {extra.counts}")


if __name__ == "__main__":
    main()
