"""`codeweaver eval …`: measure the model's decisions on labelled data sets."""

from __future__ import annotations

import asyncio
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from codeweaver.cli.progress import progress

eval_app = typer.Typer(
    help="Measure intent classification and question splitting.", no_args_is_help=True
)

FileOpt = Annotated[Path, typer.Option("--file", "-f", help="JSONL data set.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", "-n", min=1, help="First N lines only.")]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="provider:model")]


def _run(coro_factory: Any, total: int, as_json: bool) -> Any:
    """Run an evaluation coroutine, its progress shown (`cli.progress`)."""
    with progress(total, quiet=as_json) as report:
        return asyncio.run(coro_factory(report))


def _number(value: Any) -> str:
    if value is None:
        return "n/a (no hits)"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _print_report(
    title: str, data: dict[str, Any], headline: list[tuple[str, str]], as_json: bool
) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{title}[/]")
    for label, key in headline:
        value = data[key]
        console.print(f"  {label}: {_number(value)}")
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


def _load(loader: Any, path: Path, limit: int | None) -> Any:
    from codeweaver.evaluation.datasets import DatasetError

    try:
        return loader(path, limit=limit)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _deps(model: str | None) -> Any:
    """Only the model: evaluations never search or touch the stores."""
    from codeweaver.agent.deps import Deps
    from codeweaver.config import Settings
    from codeweaver.llm.registry import create_chat_model

    settings = Settings(model=model) if model else Settings()
    llm = create_chat_model(settings.model, settings)
    return Deps(llm=llm, settings=settings, model_name=settings.model)


class IntentBy(StrEnum):
    rules = "rules"
    model = "model"


@eval_app.command("intent")
def eval_intent(
    file: FileOpt,
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    by: Annotated[
        IntentBy, typer.Option("--by", help="The pipeline's rules, or the chat model.")
    ] = IntentBy.rules,
) -> None:
    """Intent accuracy and per-class precision/recall (StackEval format)."""
    from codeweaver.agent.intent import rule_intent
    from codeweaver.agent.nodes.search import predict_intent
    from codeweaver.evaluation.datasets import load_intent_examples
    from codeweaver.evaluation.runners import evaluate_intent

    examples = _load(load_intent_examples, file, limit)
    deps = _deps(model) if by is IntentBy.model else None

    async def classify(question: str) -> tuple[str, bool]:
        if deps is None:
            return rule_intent(question), False
        result = await predict_intent(deps.llm, question)
        return result.value.intent, not result.ok

    report = _run(
        lambda progress: evaluate_intent(examples, classify, on_progress=progress),
        len(examples),
        as_json,
    )
    who = deps.model_name if deps else "rules"
    _print_report(
        f"intent on {file} ({who})",
        report.to_dict(),
        [("examples", "total"), ("accuracy", "accuracy"), ("fell back to default", "fallbacks")],
        as_json,
    )


@eval_app.command("cache")
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
    from codeweaver.evaluation.cache_eval import evaluate_cache, load_pairs

    data = _load(
        lambda path, limit: load_pairs(
            path, invert_labels=invert_label, limit=limit, sample=sample, seed=seed
        ),
        pairs,
        limit,
    )
    deps = _deps(model)
    embedder = create_embedder(deps.settings.embedding_model, deps.settings)
    cutoff = deps.settings.cache_threshold if threshold is None else threshold

    async def canonicalise(question: str) -> str | None:
        canonical, problem = await english_form(deps.llm, question)
        return None if problem else canonical  # as in the graph: no key, no lookup

    report = _run(
        lambda progress: evaluate_cache(
            data, embedder, canonicalise, threshold=cutoff, on_progress=progress
        ),
        len(data),
        as_json,
    )
    result = report.to_dict()
    _print_report(
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
                f"  {kind}: precision {_number(counts['precision'])}"
                f"  recall {_number(counts['recall'])}"
                f"  false-hit rate {_number(counts['false_hit_rate'])}  ({counts['pairs']} pairs)"
            )


class Judge(StrEnum):
    words = "words"
    model = "model"


@eval_app.command("grounding")
def eval_grounding(
    file: FileOpt,
    as_json: JsonOpt = False,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    judge: Annotated[
        Judge | None,
        typer.Option(
            "--judge",
            help="Who settles claims words cannot (default: CODEWEAVER_GROUNDING_JUDGE).",
        ),
    ] = None,
) -> None:
    """Precision and recall of the grounding check at flagging unsupported answers."""
    from codeweaver.config import Settings
    from codeweaver.evaluation.grounding_eval import evaluate_grounding, load_cases

    cases = _load(load_cases, file, limit)
    chosen = judge.value if judge else Settings().grounding_judge
    llm = _deps(model).llm if chosen == "model" else None
    report = _run(lambda progress: evaluate_grounding(cases, llm, progress), len(cases), as_json)
    _print_report(
        f"grounding check on {file}",
        report.to_dict(),
        [
            ("answers", "cases"),
            ("supported answers flagged (contradiction: rewrite, warning)", "flag_rate_supported"),
            ("supported answers with a citation removed", "removed_rate_supported"),
            ("unsupported answers caught", "recall"),
            ("  of them flagged (contradiction found)", "flag_rate_unsupported"),
            ("  with the false claim's citation removed", "removed_rate_unsupported"),
            ("precision of the flags", "precision"),
            ("citations all valid before the check", "citations_valid_before"),
            ("citations all valid after the check", "citations_valid"),
            ("model calls per answer", "model_calls_per_answer"),
            ("seconds per answer", "seconds_per_answer"),
        ],
        as_json,
    )
    if not as_json:
        for kind, counts in report.to_dict()["by_kind"].items():
            typer.echo(f"  caught, {kind}: {counts['caught']}/{counts['cases']}")


@eval_app.command("grounding-set")
def eval_grounding_set(
    stackeval: Annotated[Path, typer.Option("--stackeval", help="StackEval JSONL.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")],
    limit: LimitOpt = 50,
    model: ModelOpt = None,
) -> None:
    """Write grounding cases: the model's answers from the accepted answer, and the same
    answers with a false claim inserted."""
    from codeweaver.agent import prompts
    from codeweaver.agent.citations import tidy_answer
    from codeweaver.agent.state import SearchResult
    from codeweaver.evaluation.grounding_eval import build_cases
    from codeweaver.llm.structured import message_text

    rows = _load(lambda path, limit: [r for _, r in _stackeval_rows(path, limit)], stackeval, limit)
    deps = _deps(model)

    async def answer(question: str, sources: list[SearchResult]) -> str:
        numbered = [(n, s["title"], s["snippet"]) for n, s in enumerate(sources, 1)]
        messages = prompts.answer_messages(question, "en", "learning", numbered)
        return tidy_answer(message_text(await deps.llm.ainvoke(messages)), sources)

    # Each case is written as soon as it is built: an interrupted run keeps what it made.
    written = 0
    with out.open("w", encoding="utf-8") as sink:

        def keep(case: dict[str, Any]) -> None:
            nonlocal written
            sink.write(json.dumps(case, ensure_ascii=False) + "\n")
            sink.flush()
            written += 1

        try:
            _run(lambda progress: build_cases(rows, answer, progress, keep), len(rows), False)
        except Exception as exc:  # the model's failure, whatever its kind, ends the run
            typer.echo(
                f"error: answering question {written // 2 + 1} failed ({exc}); "
                f"the {written} cases made before it are in {out}",
                err=True,
            )
            raise typer.Exit(1) from None
    typer.echo(f"wrote {written} cases to {out}")


def _stackeval_rows(path: Path, limit: int | None) -> Any:
    from codeweaver.evaluation.datasets import DatasetError, read_jsonl

    for count, (line, row) in enumerate(read_jsonl(path), 1):
        if not isinstance(row.get("question"), str) or not isinstance(row.get("answer"), str):
            raise DatasetError(path, "needs `question` and `answer` text", line)
        yield line, row
        if limit is not None and count >= limit:
            return


# Imported last, as they register on eval_app: `eval code`, `eval retrieval`, `eval split`.
from codeweaver.cli import eval_code_cmd, eval_retrieval_cmd, eval_split_cmd  # noqa: E402, F401
