"""What the `codeweaver eval` commands share: their options, the model they measure, the
progress display around a run and the report printed after it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codeweaver_eval.cli.progress import progress

if TYPE_CHECKING:
    from codeweaver.agent.deps import Deps

FileOpt = Annotated[Path, typer.Option("--file", "-f", help="JSONL data set.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", "-n", min=1, help="First N lines only.")]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="provider:model")]


def run_with_progress(coro_factory: Any, total: int, as_json: bool) -> Any:
    """Run an evaluation coroutine, its progress shown (`cli.progress`)."""
    with progress(total, quiet=as_json) as report:
        return asyncio.run(coro_factory(report))


def number(value: Any) -> str:
    """A figure of a report as printed: three decimals, or why there is none."""
    if value is None:
        return "n/a (no hits)"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_report(
    title: str, data: dict[str, Any], headline: list[tuple[str, str]], as_json: bool
) -> None:
    """The report as JSON, or its headline figures then a table per class."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{title}[/]")
    for label, key in headline:
        value = data[key]
        console.print(f"  {label}: {number(value)}")
    per_class = data.get("per_class") or data.get("per_case") or {}
    if not per_class:
        return
    table = Table("class", "precision", "recall", "support")
    for label, metrics in per_class.items():
        table.add_row(
            label,
            f"{metrics.get('precision', 0):.3f}",
            f"{metrics.get('recall', 0):.3f}",
            str(metrics.get("support", "")),
        )
    console.print(table)


def load(loader: Callable[..., Any], path: Path, limit: int | None) -> Any:
    """`loader(path, limit=limit)`; a malformed data set exits 2, naming its line."""
    from codeweaver_eval.datasets import DatasetError

    try:
        return loader(path, limit=limit)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def model_deps(model: str | None) -> Deps:
    """Only the model: evaluations never search or touch the stores."""
    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings
    from codeweaver.llm.registry import create_chat_model

    settings = Settings(model=model) if model else Settings()
    llm = create_chat_model(settings.model, settings)
    return Deps(llm=llm, settings=settings, model_name=settings.model)
