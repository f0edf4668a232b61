"""Benchmark: does every installed-docs entry need a vector? CoNaLa recall with vectors for
a part of the entries only, side by side in one run.

Each row ranks the same questions with the index's vectors kept for one subset of the
entries and zeroed for the others (an entry without a vector is never a dense candidate
and gets no dense similarity): all entries, none (the vector score model with nothing
embedded), the stdlib, the APIs installed code calls most (`vectors.popular_rows`, what a
build embeds first and searches use before the rest), the APIs CoNaLa's calibration half
uses (`usage.ANSWER_USAGE`, counted on the even half: measure on the odd half), and the
stdlib with the popular ones. The first row is the ranking without vectors (its own score
model), what a search uses until the popular ones are embedded.

    .venv/bin/python -m codeweaver_eval.bench.docs_vectors_subset \\
        --file conala-train.json [--part odd]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from codeweaver.config import Settings
from codeweaver.sources.installed_docs import RankingOptions, source_for
from codeweaver.sources.installed_docs.usage import ANSWER_USAGE
from codeweaver.sources.installed_docs.vectors import PRIORITY_SHARE, popular_rows
from codeweaver_eval.repository import SHARED_DATA
from codeweaver_eval.retrieval_eval import evaluate_retrieval, load_questions

CONALA = SHARED_DATA / "retrieval" / "conala" / "conala-train.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=CONALA)
    parser.add_argument("--part", choices=["all", "even", "odd"], default="odd")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    questions = load_questions(args.file, part=args.part)
    settings = Settings()

    plain = source_for(settings, None, RankingOptions(dense=False))
    plain._recheck_interval = float("inf")
    plain.ensure_index()
    report = evaluate_retrieval(questions, plain.search_sync, plain.catalogue(), k=args.k)
    print(f"{len(questions)} questions (part {args.part}), k={args.k}")
    show("no vectors (lexical score model)", 0, report.to_dict())

    source = source_for(settings, None)
    source._recheck_interval = float("inf")  # one index for every row, whatever is installed
    source.ensure_index()
    source.search_sync("read a file", 1)  # builds the ranker with the vectors
    ranker = source._ranker
    if ranker is None or ranker.vectors is None or source._loaded is None:
        raise SystemExit("the index has no vectors yet: run `codeweaver setup --wait` first")
    entries, full = source._loaded.entries, ranker.vectors
    popular_set = set(popular_rows(entries, source._loaded.popularity))

    def popular(i: int) -> bool:
        return i in popular_set

    def used(i: int) -> bool:
        names = (entries[i].name, *entries[i].aliases)
        return any(ANSWER_USAGE.get(n, 0) > 0 for n in names)

    def stdlib(i: int) -> bool:
        return entries[i].package == "python"

    subsets: dict[str, Callable[[int], bool]] = {
        "all entries": lambda i: True,
        "none": lambda i: False,
        "stdlib": stdlib,
        f"popular (top {PRIORITY_SHARE:.0%} by calls)": popular,
        "used by CoNaLa answers (even half)": used,
        "stdlib + popular": lambda i: stdlib(i) or popular(i),
    }
    for label, keep in subsets.items():
        mask = np.array([keep(i) for i in range(len(entries))], dtype=bool)
        source._ranker = ranker.with_vectors(np.where(mask[:, None], full, 0).astype(np.float32))
        report = evaluate_retrieval(questions, source.search_sync, source.catalogue(), k=args.k)
        show(label, int(mask.sum()), report.to_dict(), len(entries))


def show(label: str, embedded: int, summary: dict[str, float], total: int = 0) -> None:
    share = f"{embedded:,}/{total:,} entries embedded" if total else "no vectors"
    print(
        f"  {label:40} {share:30} recall@k {summary['recall_at_k']:.3f}  MRR "
        f"{summary['mrr']:.3f}  top-1 hit {summary['top1_precision']:.3f}  "
        f"nothing {summary['empty_share']:.0%}"
    )


if __name__ == "__main__":
    main()
