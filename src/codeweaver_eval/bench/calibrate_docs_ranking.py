"""Calibrate the installed-docs score: fit `ranking.SCORE_MODEL` and sweep the threshold.

Fits on one part of CoNaLa (questions with even `question_id` by default), with and without
the dense vectors, then prints each fitted model and, for the calibration part and the other
part, what the source would return at each threshold. Copy the models into
`ranking.SCORE_MODEL` / `SCORE_MODEL_NO_VECTORS`, pick `SCORE_THRESHOLD`.

`--write-usage` first rewrites `installed_docs/data/answer_usage.json` from the fit part's reference
snippets (`retrieval_calibrate.answer_usage`); refit the models after it (run again).

    .venv/bin/python -m codeweaver_eval.bench.calibrate_docs_ranking \
        --file ../shared/data/retrieval/conala/conala-train.json [--write-usage]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Literal

from codeweaver.config import Settings
from codeweaver.sources.installed_docs import InstalledDocsSource, RankingOptions, ranking, usage
from codeweaver_eval.retrieval_calibrate import answer_usage, collect, fit_logistic, sweep
from codeweaver_eval.retrieval_eval import load_questions

THRESHOLDS = [0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6]


def write_usage(counts: dict[str, int], part: str) -> None:
    """Rewrite the answer-usage counts, the package data `usage.USAGE_FILE`."""
    path = usage.USAGE_FILE
    text = json.dumps(dict(sorted(counts.items())), indent=0, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {len(counts)} names from the {part} part to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--fit-part", choices=["even", "odd"], default="even")
    parser.add_argument("--keep-model", action="store_true", help="Sweep the current models.")
    parser.add_argument(
        "--write-usage",
        action="store_true",
        help="Rewrite the usage counts from the fit part, stop.",
    )
    args = parser.parse_args()
    fit: Literal["even", "odd"] = "odd" if args.fit_part == "odd" else "even"
    other: Literal["even", "odd"] = "odd" if fit == "even" else "even"
    parts = {name: load_questions(args.file, part=name) for name in (fit, other)}
    if args.write_usage:
        source = InstalledDocsSource(Settings().docs_index_dir)
        source.ensure_index()
        write_usage(answer_usage(parts[fit], source.catalogue()), fit)
        return
    for dense, current, label in (
        (True, ranking.SCORE_MODEL, "SCORE_MODEL"),
        (False, ranking.SCORE_MODEL_NO_VECTORS, "SCORE_MODEL_NO_VECTORS"),
    ):
        options = RankingOptions(dense=dense, threshold=False)
        source = InstalledDocsSource(Settings().docs_index_dir, ranking=options)
        source.ensure_index()
        catalogue = source.catalogue()
        ranker = source._ranker_for(source._ensure(None, retry=True), None, wait=True)
        rows = {name: collect(qs, ranker.rank, catalogue) for name, qs in parts.items()}
        # The ranking sorts by the current model; refitting re-sorts within the candidates.
        model = current if args.keep_model else fit_logistic(rows[fit])
        print(f"{label} =", tuple(round(w, 3) for w in model))
        # The relevance the bar reads: the same fit without the answer-usage feature (last).
        plain = [dataclasses.replace(r, features=r.features[:-1]) for r in rows[fit]]
        relevance = fit_logistic(plain)
        print(f"{label.replace('SCORE', 'RELEVANCE')} =", tuple(round(w, 3) for w in relevance))
        for name, labelled in rows.items():
            print(f"  part {name}: {len(parts[name])} questions")
            for line in sweep(labelled, model, THRESHOLDS, len(parts[name])):
                print("  ", json.dumps({k: round(v, 3) for k, v in line.items()}))


if __name__ == "__main__":
    main()
