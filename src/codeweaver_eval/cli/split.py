"""`codeweaver eval split`: how the planner reads messages, and who decided each plan."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from codeweaver_eval.cli.common import (
    JsonOpt,
    LimitOpt,
    ModelOpt,
    load,
    model_deps,
    number,
    run_with_progress,
)


class SplitBy(StrEnum):
    rules = "rules"
    model = "model"


def eval_split(
    files: Annotated[
        list[Path],
        typer.Option("--file", "-f", help="JSONL data set; repeat to measure several at once."),
    ],
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    sample: Annotated[
        int | None,
        typer.Option("--sample", min=1, help="N messages drawn at random (seeded) per file."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    by: Annotated[
        SplitBy,
        typer.Option(
            "--by",
            help="rules: the rules alone, no model loaded (what they leave is "
            "'needs_model'); model: the planner as it runs, model where rules cannot tell.",
        ),
    ] = SplitBy.model,
) -> None:
    """Share of messages whose case (single / 2 / too many) and questions come out right,
    and how many of the decisions the rules made and how many the model."""
    from codeweaver.agent.nodes.plan import plan_by_rules, plan_message
    from codeweaver_eval.datasets import SplitExample, load_split_examples
    from codeweaver_eval.runners import evaluate_split

    examples: list[SplitExample] = []
    for file in files:
        examples += load(
            lambda path, limit: load_split_examples(path, limit=limit, sample=sample, seed=seed),
            file,
            limit,
        )
    deps = model_deps(model) if by is SplitBy.model else None

    async def plan(message: str) -> tuple[str, list[str], str]:
        if deps is None:
            ruled = plan_by_rules(message)
            if ruled is None:
                return "needs_model", [], "model"
            return ruled[0], ruled[1], "rules"
        case, questions, how, _fallback = await plan_message(message, deps)
        return case, questions, "model" if how == "model" else "rules"

    report = run_with_progress(
        lambda progress: evaluate_split(examples, plan, on_progress=progress),
        len(examples),
        as_json,
    )
    names = ", ".join(str(f) for f in files)
    _print_split_report(
        f"split on {names} ({deps.model_name if deps else 'rules only'})",
        report.to_dict(),
        as_json,
    )


def _print_split_report(title: str, data: dict[str, Any], as_json: bool) -> None:
    """Headline figures, then per expected case: how it came out and who decided."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{title}[/]")
    for label, key in [
        ("messages", "total"),
        ("case right", "case_accuracy"),
        ("case and questions right", "full_accuracy"),
        ("errors", "errors"),
    ]:
        console.print(f"  {label}: {number(data[key])}")
    deciders = data["decided_by"]
    console.print(f"  decided by the rules: {deciders['rules']}, by the model: {deciders['model']}")
    table = Table("expected", "n", "case ok", "all ok", "recall", "prec.", "rules", "model")
    for case, counts in data["per_case"].items():
        if not counts["support"]:  # a label only predicted, such as 'needs_model'
            continue
        table.add_row(
            case,
            str(counts["support"]),
            str(counts["case_correct"]),
            str(counts["fully_correct"]),
            f"{counts.get('recall', 0):.3f}",
            f"{counts.get('precision', 0):.3f}",
            str(counts["decided_by"]["rules"]),
            str(counts["decided_by"]["model"]),
        )
    console.print(table)
