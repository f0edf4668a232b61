"""`codeweaver eval grounding` and `grounding-set`: the grounding check on labelled
answers, and writing such answers from StackEval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from codeweaver_eval.cli.common import (
    FileOpt,
    JsonOpt,
    LimitOpt,
    ModelOpt,
    load,
    model_deps,
    print_report,
    run_with_progress,
)


class Judge(StrEnum):
    words = "words"
    model = "model"


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
    from codeweaver_eval.grounding_eval import evaluate_grounding, load_cases

    cases = load(load_cases, file, limit)
    chosen = judge.value if judge else Settings().grounding_judge
    llm = model_deps(model).llm if chosen == "model" else None
    report = run_with_progress(
        lambda progress: evaluate_grounding(cases, llm, progress), len(cases), as_json
    )
    print_report(
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
        figures = report.to_dict()
        for kind, counts in figures["supported_by_kind"].items():
            typer.echo(f"  supported touched, {kind}: {_share(counts, 'touched')}")
        for kind, counts in figures["by_kind"].items():
            typer.echo(f"  caught, {kind}: {_share(counts, 'caught')}")


def _share(counts: dict[str, Any], key: str) -> str:
    """ "3/20 (15%; flagged 2, citation removed 1)": a line of the breakdown by kind."""
    return (
        f"{counts[key]}/{counts['cases']} ({counts['rate']:.0%}; flagged {counts['flagged']}, "
        f"citation removed {counts['removed']})"
    )


def eval_grounding_set(
    stackeval: Annotated[Path, typer.Option("--stackeval", help="StackEval JSONL.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")],
    limit: LimitOpt = 50,
    model: ModelOpt = None,
) -> None:
    """Write grounding cases: the model's answers from the accepted answer, and the same
    answers with a false claim inserted."""
    from codeweaver.agent import prompts
    from codeweaver.agent.answering.citations import tidy_answer
    from codeweaver.agent.state import SearchResult
    from codeweaver.llm.structured import message_text
    from codeweaver_eval.grounding_eval import build_cases

    rows = load(lambda path, limit: [r for _, r in _stackeval_rows(path, limit)], stackeval, limit)
    deps = model_deps(model)

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
            run_with_progress(
                lambda progress: build_cases(rows, answer, progress, keep), len(rows), False
            )
        except Exception as exc:  # the model's failure, whatever its kind, ends the run
            typer.echo(
                f"error: answering question {written // 2 + 1} failed ({exc}); "
                f"the {written} cases made before it are in {out}",
                err=True,
            )
            raise typer.Exit(1) from None
    typer.echo(f"wrote {written} cases to {out}")


def _stackeval_rows(path: Path, limit: int | None) -> Iterator[tuple[int, dict[str, Any]]]:
    from codeweaver_eval.datasets import DatasetError, read_jsonl

    for count, (line, row) in enumerate(read_jsonl(path), 1):
        if not isinstance(row.get("question"), str) or not isinstance(row.get("answer"), str):
            raise DatasetError(path, "needs `question` and `answer` text", line)
        yield line, row
        if limit is not None and count >= limit:
            return
