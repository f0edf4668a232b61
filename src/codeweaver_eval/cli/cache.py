"""`codeweaver eval cache`: the semantic cache's decision on labelled question pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codeweaver_eval.cli.common import (
    JsonOpt,
    LimitOpt,
    ModelOpt,
    load,
    model_deps,
    number,
    print_report,
    run_with_progress,
)


def eval_cache(
    pairs: Annotated[Path, typer.Option("--pairs", "-p", help="JSONL or CSV question pairs.")],
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    invert_label: Annotated[
        bool, typer.Option("--invert-label", help="0 means the same question (Korean set).")
    ] = False,
    threshold: Annotated[
        float | None, typer.Option("--threshold", min=0.0, max=1.0, help="Cosine threshold.")
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option("--sample", min=1, help="N pairs drawn at random (seeded) from the file."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
) -> None:
    """Precision, recall and false-hit rate of the semantic cache's decision on pairs."""
    from codeweaver.agent.nodes.analyze import english_form
    from codeweaver.embeddings import create_embedder
    from codeweaver_eval.cache_eval import evaluate_cache, load_pairs

    data = load(
        lambda path, limit: load_pairs(
            path, invert_labels=invert_label, limit=limit, sample=sample, seed=seed
        ),
        pairs,
        limit,
    )
    deps = model_deps(model)
    embedder = create_embedder(deps.settings.embeddings, deps.settings)
    cutoff = deps.settings.cache_threshold if threshold is None else threshold

    async def canonicalise(question: str) -> str | None:
        canonical, problem = await english_form(deps.llm, question)
        return None if problem else canonical  # as in the graph: no key, no lookup

    report = run_with_progress(
        lambda progress: evaluate_cache(
            data, embedder, canonicalise, threshold=cutoff, on_progress=progress
        ),
        len(data),
        as_json,
    )
    result = report.to_dict()
    print_report(
        f"cache decision on {pairs} (threshold {cutoff:.2f}, {embedder.name})",
        result,
        [
            ("pairs", "pairs"),
            ("precision", "precision"),
            ("recall", "recall"),
            ("false-hit rate", "false_hit_rate"),
        ],
        as_json,
    )
    if not as_json:
        for kind, counts in result["by_kind"].items():
            typer.echo(
                f"  {kind}: precision {number(counts['precision'])}"
                f"  recall {number(counts['recall'])}"
                f"  false-hit rate {number(counts['false_hit_rate'])}  ({counts['pairs']} pairs)"
            )
