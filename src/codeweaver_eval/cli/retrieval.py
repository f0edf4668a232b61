"""`codeweaver eval retrieval`: recall@k and MRR of the installed-docs search on CoNaLa data."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from codeweaver_eval.cli.common import FileOpt, JsonOpt, LimitOpt, number
from codeweaver_eval.cli.progress import progress


class EnvChoice(StrEnum):
    auto = "auto"
    own = "own"
    project = "project"
    both = "both"


class PartChoice(StrEnum):
    all = "all"
    even = "even"
    odd = "odd"


def eval_retrieval(
    file: FileOpt,
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="N questions drawn at random (seeded).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    part: Annotated[
        PartChoice,
        typer.Option(
            "--part",
            help="Questions with even or odd question_id only (even: the calibration part).",
        ),
    ] = PartChoice.all,
    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Results per question.")] = 5,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write per-question JSONL here.")
    ] = None,
    no_dense: Annotated[bool, typer.Option("--no-dense", help="Rank without vectors.")] = False,
    no_exact: Annotated[bool, typer.Option("--no-exact", help="No exact-name list.")] = False,
    no_packages: Annotated[bool, typer.Option("--no-packages", help="No package prior.")] = False,
    no_threshold: Annotated[
        bool, typer.Option("--no-threshold", help="Return the top k whatever their score.")
    ] = False,
    env: Annotated[
        EnvChoice,
        typer.Option(
            "--env",
            help="Whose installed docs: the one `ask` uses (auto: the project's environment "
            "when one is found), CodeWeaver's own, the project's, or both, reported apart.",
        ),
    ] = EnvChoice.auto,
) -> None:
    """Recall@k, MRR and precision of the installed-docs search on CoNaLa-format data.

    A hit is a result documenting a function, method, class or property the reference
    snippet uses. `--json` prints one JSON line per question, then `{"summary": …}`.
    """
    from codeweaver.config import Settings
    from codeweaver.sources.installed_docs import RankingOptions, find_project_for, source_for
    from codeweaver.sources.installed_docs.project import describe
    from codeweaver_eval.retrieval_eval import evaluate_retrieval, load_questions

    questions = _questions(load_questions, file, limit, sample, seed, part.value)
    options = RankingOptions(
        dense=not no_dense, exact=not no_exact, packages=not no_packages,
        threshold=not no_threshold,
    )  # fmt: skip
    settings = Settings()
    project = find_project_for(settings)
    has_project = project.env is not None and not project.env.own
    if env is EnvChoice.project and not has_project:
        reason = project.reason or "the project's interpreter is CodeWeaver's own"
        typer.echo(f"error: no project environment for {project.root}: {reason}", err=True)
        raise typer.Exit(2)
    chosen: list[tuple[str, Any]] = []
    if env is EnvChoice.own or env is EnvChoice.both or (env is EnvChoice.auto and not has_project):
        chosen.append(("own", None))
    if has_project and env is not EnvChoice.own:
        chosen.append(("project", project.env))
    off = [name for name, on in vars(options).items() if not on]
    for label, environment in chosen:
        source = source_for(settings, environment, options)
        described = describe(project if environment is not None else _own(project), None)
        phases: dict[str, int] = {}

        def on_phase(phase: str, done: int, total: int, phases: dict[str, int] = phases) -> None:
            if not as_json and phases.get(phase) != done * 10 // max(total, 1):
                phases[phase] = done * 10 // max(total, 1)
                typer.echo(f"{phase}: {done}/{total}", err=True)

        source.ensure_index(on_phase)
        with progress(len(questions), quiet=as_json) as report_progress:
            report = evaluate_retrieval(
                questions, source.search_sync, source.catalogue(), k=k,
                on_progress=report_progress,
            )  # fmt: skip
        lines = [json.dumps(q.to_dict(), ensure_ascii=False) for q in report.per_question]
        if out is not None:
            target = out if len(chosen) == 1 else out.with_name(f"{out.stem}.{label}{out.suffix}")
            target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        summary = report.to_dict()
        if as_json:
            for line in lines:
                typer.echo(line)
            typer.echo(json.dumps({"summary": summary, "environment": described}))
            continue
        _print_summary(summary, described, file, part.value, off, k)


def _own(project: Any) -> Any:
    """`project` as `describe` shows CodeWeaver's own environment."""
    from dataclasses import replace

    return replace(project, env=None, reason=project.reason or "CodeWeaver's own, by choice")


def _print_summary(
    summary: dict[str, Any], env: dict[str, Any], file: Path, part: str, off: list[str], k: int
) -> None:
    where = (
        f"the project's environment {env['python']} ({env.get('found_by', '')})"
        if env["environment"] == "project"
        else f"CodeWeaver's own environment {env['python']}"
    )
    typer.echo(f"retrieval on {file} (part {part}; off: {', '.join(off) or 'none'})")
    typer.echo(
        f"  docs of: {where}, Python {env['python_version']}, {env['distributions']} distributions"
    )
    for label, key in [
        ("questions", "questions"),
        ("snippets", "rows"),
        (f"recall@{k}", "recall_at_k"),
        (f"MRR@{k}", "mrr"),
        ("ceiling (a used name is in the index)", "ceiling"),
        ("questions with no result", "empty_share"),
        ("top-1 results that are hits", "top1_precision"),
        ("returned results that are hits", "result_precision"),
        ("results per question", "results_per_question"),
        ("seconds per question", "seconds_per_question"),
    ]:
        typer.echo(f"  {label}: {number(summary[key])}")


def _questions(
    loader: Any, file: Path, limit: int | None, sample: int | None, seed: int, part: str
) -> Any:
    from codeweaver_eval.datasets import DatasetError

    try:
        return loader(file, limit=limit, sample=sample, seed=seed, part=part)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
