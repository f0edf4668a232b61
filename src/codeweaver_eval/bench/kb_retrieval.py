"""Benchmark: which embedder the knowledge base should use, and hybrid against dense.

Ranks documents for queries with the knowledge base's own code: BM25 is
`codeweaver.kb.lexical.LexicalIndex`, the fusion is `codeweaver.kb.search.fuse` over
`candidate_count(5)` candidates per side (what `KnowledgeBase.search(limit=5)` does);
documents are embedded with `embed_documents` (E5's `passage: ` side), queries with `embed`,
as the knowledge base does. Dense ranking is exact cosine in NumPy instead of Qdrant (the
same order, without a store on disk); ties count against the target.

Data (public, never written by us):
  a. English: StackEval (`intent/stackeval/stack-eval.jsonl`, 925 Stack Overflow
     questions): documents are the accepted answers (first 800 characters, like a KB
     chunk), queries the questions' titles (first line), target the question's own answer.
  b. Korean->Korean: songys question pairs (`pairs/korean_songys/kor_pair_train.csv`, label
     inverted: 0 = same). Documents: the second question of up to 1,000 duplicate pairs
     (q1 != q2) plus 2,000 other distinct questions (seeded); queries: the first questions.
  c. Korean->English: `tests/fixtures/korean/stackeval_ko20.jsonl` (20 StackEval questions
     rewritten in Korean) against all 925 StackEval answers; the English titles of the same
     20 questions are reported for comparison.

Reported: recall@1, recall@5 and MRR (over the top 20: a target ranked lower adds 0) for
BM25 alone, vectors alone, the hybrid as the knowledge base runs it (plain RRF) and, for
comparison, RRF with BM25's votes at half weight (`fuse(..., lexical_weight=0.5)`).
Vectors are cached in /tmp/codeweaver-bench-kb by embedder, side and texts.

    .venv/bin/python -m codeweaver_eval.bench.kb_retrieval \\
        [--limit N] [--embedders a,b] [--data DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from codeweaver.config import Settings
from codeweaver.embeddings import Embedder, create_embedder
from codeweaver.embeddings.base import embed_documents
from codeweaver.kb.lexical import LexicalIndex
from codeweaver.kb.search import candidate_count, fuse
from codeweaver_eval.cache_eval import load_pairs
from codeweaver_eval.repository import ROOT, SHARED_DATA

DATA = SHARED_DATA
STACKEVAL = Path("intent/stackeval/stack-eval.jsonl")
KOREAN_PAIRS = Path("pairs/korean_songys/kor_pair_train.csv")
KO20 = ROOT / "tests/fixtures/korean/stackeval_ko20.jsonl"
CACHE = Path("/tmp/codeweaver-bench-kb")
EMBEDDERS = ["minilm", "multilingual-e5-small", "use-multilingual"]
CHUNK_CHARS = 800
LIMIT = 5  # KnowledgeBase.search's default; fixes the candidate count of the fusion
MRR_DEPTH = 20
Vectors = NDArray[np.float32]


@dataclass
class Task:
    name: str
    docs: list[str]
    queries: list[str]
    targets: list[int]  # index into docs, one per query


def stackeval(data: Path) -> list[dict[str, str]]:
    with (data / STACKEVAL).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def title(question: str) -> str:
    return question.strip().split("\n", 1)[0].strip()


def english_task(rows: list[dict[str, str]], limit: int | None) -> Task:
    rows = rows[:limit] if limit else rows
    docs = [r["answer"][:CHUNK_CHARS] for r in rows]
    return Task("a. English (StackEval titles -> answers)", docs,
                [title(r["question"]) for r in rows], list(range(len(rows))))  # fmt: skip


def korean_task(data: Path, limit: int | None, distractors: int, seed: int) -> Task:
    pairs = load_pairs(data / KOREAN_PAIRS, invert_labels=True)
    chosen: list[tuple[str, str]] = []
    used: set[str] = set()
    for p in pairs:
        if p.same and p.q1 != p.q2 and p.q1 not in used and p.q2 not in used:
            chosen.append((p.q1, p.q2))
            used |= {p.q1, p.q2}  # one target per document, one query per question
        if len(chosen) >= (limit or 1000):
            break
    others = sorted({q for p in pairs for q in (p.q1, p.q2)} - used)
    rng = random.Random(seed)
    docs = [q2 for _, q2 in chosen] + rng.sample(others, min(distractors, len(others)))
    order = list(range(len(docs)))
    rng.shuffle(order)  # targets scattered, so BM25's ties (store order) favour none
    position = {old: new for new, old in enumerate(order)}
    return Task(f"b. Korean -> Korean (songys, {len(chosen)} pairs + "
                f"{len(docs) - len(chosen)} distractors)",
                [docs[i] for i in order], [q1 for q1, _ in chosen],
                [position[i] for i in range(len(chosen))])  # fmt: skip


def korean_english_tasks(rows: list[dict[str, str]]) -> list[Task]:
    docs = [r["answer"][:CHUNK_CHARS] for r in rows]
    index = {r["questionId"]: i for i, r in enumerate(rows)}
    with KO20.open(encoding="utf-8") as handle:
        ko = [json.loads(line) for line in handle if line.strip()]
    targets = [index[r["questionId"]] for r in ko]
    return [
        Task("c. Korean -> English (StackEval ko20, Korean queries)", docs,
             [r["question"] for r in ko], targets),
        Task("c'. same 20, English titles", docs, [r["english_title"] for r in ko], targets),
    ]  # fmt: skip


def cached(embedder: Embedder, side: str, texts: list[str], run: Callable[[], Vectors]) -> Vectors:
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{embedder.name}-{side}-{digest}.npy"
    if path.exists():
        loaded: Vectors = np.load(path)
        return loaded
    started = time.perf_counter()
    vectors = run()
    seconds = time.perf_counter() - started
    print(f"  embedded {len(texts)} {side} texts in {seconds:.1f} s "
          f"({len(texts) / max(seconds, 1e-9):.0f}/s)", file=sys.stderr)  # fmt: skip
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def dense_ranking(sims: NDArray[np.float32], target: int, depth: int) -> list[str]:
    """Doc ids by cosine, best first; equal scores put the target last (pessimistic)."""
    is_target = np.zeros(len(sims), dtype=bool)
    is_target[target] = True
    order = np.lexsort((is_target, -sims))[:depth]
    return [str(i) for i in order]


def rank_of(ids: Sequence[str], target: int) -> int | None:
    key = str(target)
    return next((r for r, pid in enumerate(ids, 1) if pid == key), None)


def metrics(ranks: list[int | None]) -> tuple[float, float, float]:
    n = max(len(ranks), 1)
    r1 = sum(1 for r in ranks if r == 1) / n
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= MRR_DEPTH) / n
    return r1, r5, mrr


def evaluate(
    task: Task, embedder: Embedder | None, lexical: LexicalIndex
) -> dict[str, tuple[float, float, float]]:
    n = candidate_count(LIMIT)
    lex_lists = [[h.id for h in lexical.search(q, max(n, MRR_DEPTH))] for q in task.queries]
    results = {
        "lexical": metrics(
            [rank_of(ids, t) for ids, t in zip(lex_lists, task.targets, strict=True)]
        )
    }
    if embedder is None:
        return results
    docs = cached(embedder, "doc", task.docs, lambda: embed_documents(embedder, task.docs))
    queries = cached(embedder, "query", task.queries, lambda: embedder.embed(task.queries))
    sims = queries @ docs.T
    dense_lists = [dense_ranking(sims[i], t, max(n, MRR_DEPTH)) for i, t in enumerate(task.targets)]
    results["dense"] = metrics(
        [rank_of(ids, t) for ids, t in zip(dense_lists, task.targets, strict=True)]
    )
    hybrid = [
        rank_of([f.id for f in fuse(d[:n], w[:n])], t)
        for d, w, t in zip(dense_lists, lex_lists, task.targets, strict=True)
    ]
    results["hybrid"] = metrics(hybrid)
    results["hybrid-half"] = metrics([
        rank_of([f.id for f in fuse(d[:n], w[:n], lexical_weight=0.5)], t)
        for d, w, t in zip(dense_lists, lex_lists, task.targets, strict=True)
    ])  # fmt: skip
    return results


def table(task: Task, rows: list[tuple[str, tuple[float, float, float]]]) -> None:
    print(f"\n### {task.name}: {len(task.queries)} queries, {len(task.docs)} documents\n")
    print("| method | recall@1 | recall@5 | MRR |")
    print("|---|---:|---:|---:|")
    for label, (r1, r5, mrr) in rows:
        print(f"| {label} | {r1:.3f} | {r5:.3f} | {mrr:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="queries per set (a, b)")
    parser.add_argument("--distractors", type=int, default=2000, help="set b")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = stackeval(args.data)
    tasks = [english_task(rows, args.limit),
             korean_task(args.data, args.limit, args.distractors, args.seed),
             *korean_english_tasks(rows)]  # fmt: skip
    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    settings = Settings()
    embedders: dict[str, Embedder] = {}
    for name in names:
        t0 = time.perf_counter()
        embedders[name] = create_embedder(name, settings)
        embedders[name].embed(["warm up"])
        print(f"{name}: loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    for task in tasks:
        t0 = time.perf_counter()
        lexical = LexicalIndex([str(i) for i in range(len(task.docs))], task.docs)
        print(f"{task.name}: BM25 built in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        out: list[tuple[str, tuple[float, float, float]]] = []
        out.append(("lexical (BM25)", evaluate(task, None, lexical)["lexical"]))
        for name, embedder in embedders.items():
            print(f"{task.name}: {name}", file=sys.stderr)
            res = evaluate(task, embedder, lexical)
            out += [(f"dense {name}", res["dense"]), (f"hybrid {name}", res["hybrid"]),
                    (f"hybrid {name}, BM25 x0.5", res["hybrid-half"])]  # fmt: skip
        table(task, out)
    print(f"\nran in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
