"""`codeweaver eval answers`: the pipeline against the bare model, side by side."""

from __future__ import annotations

import asyncio
import json
import tempfile
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from codeweaver.cli.eval_cmds import FileOpt, JsonOpt, LimitOpt, ModelOpt, eval_app
from codeweaver.cli.progress import progress

SYSTEMS = ("pipeline", "bare")
# A loopback run never runs out of quota: the quota is not what it measures.
LOOPBACK_QUOTA = 100_000
ROWS = [
    ("answers", "answers", "{}"),
    ("identifier recall (mean)", "identifier_recall", "{:.3f}"),
    ("median seconds", "median_seconds", "{:.1f}"),
    ("mean seconds", "mean_seconds", "{:.1f}"),
    ("model calls", "model_calls", "{:.2f}"),
    ("prompt tokens", "prompt_tokens", "{:.0f}"),
    ("completion tokens", "completion_tokens", "{:.0f}"),
    ("drafts per answer", "drafts", "{:.2f}"),
    ("answers with a warning", "warnings", "{}"),
    ("declined (too many)", "declined", "{}"),
    ("split in two", "split", "{}"),
    ("sources cited (mean)", "sources_cited", "{:.2f}"),
    ("answers citing a source", "answers_citing", "{}"),
    ("answers in the question's language", "in_question_language", "{}"),
    ("searched with an English form", "searched_in_english", "{}"),
    ("errors", "errors", "{}"),
]
# Shown when the questions' origin posts were served (`--stackexchange-loopback`).
ORIGIN_ROWS = [
    ("origin post returned by the API", "origin_served", "{}"),
    ("origin post among the sources", "origin_found", "{}"),
    ("answers citing the origin post", "cites_origin", "{}"),
    ("  share citing the origin post", "cites_origin_rate", "{:.1%}"),
    ("longest query sent (chars)", "max_query_chars", "{}"),
]


class Ask(StrEnum):
    POST = "post"
    TITLE = "title"
    KOREAN = "korean"


def _cell(value: Any, fmt: str) -> str:
    return "—" if value is None else fmt.format(value)


def _print_summary(title: str, summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{title}[/]  ({summary['questions']} questions)")
    table = Table("", *SYSTEMS, "pipeline / bare")
    systems = summary["systems"]
    ratios = systems["pipeline"].get("ratio_to_bare", {})
    served = any(systems[n].get(k) is not None for n in SYSTEMS for _, k, _ in ORIGIN_ROWS)
    for label, key, fmt in ROWS + (ORIGIN_ROWS if served else []):
        ratio = ratios.get(key)
        table.add_row(
            label,
            *(_cell(systems[name].get(key), fmt) for name in SYSTEMS),
            f"{ratio:.2f}x" if ratio else "",
        )
    if any(systems[name].get("verdicts") for name in SYSTEMS):
        table.add_row(
            "judge: acceptable / partial / unacceptable",
            *(
                " / ".join(str(v) for v in (systems[name].get("verdicts") or {}).values())
                for name in SYSTEMS
            ),
            "",
        )
    console.print(table)


@eval_app.command("answers")
def eval_answers(
    file: FileOpt,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="N questions drawn at random (seeded).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of --sample.")] = 0,
    limit: LimitOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Per-question JSONL; rows already there are kept."),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="provider:model that grades each answer.")
    ] = None,
    model: ModelOpt = None,
    ask: Annotated[
        Ask,
        typer.Option(
            "--ask",
            help="How a StackEval row is asked: the pasted post, its title line, or the "
            "`question` of a Korean file whose rows keep StackEval's questionId.",
        ),
    ] = Ask.POST,
    loopback: Annotated[
        bool,
        typer.Option(
            "--stackexchange-loopback",
            help="Serve the StackEval posts as a local Stack Exchange API: Stack Overflow "
            "searches it, web/GitHub/Tavily stay off, and each answer is checked for "
            "citing the post its question came from.",
        ),
    ] = False,
    corpus_file: Annotated[
        Path | None,
        typer.Option(
            "--loopback-corpus",
            help="StackEval JSONL the loopback serves (default: --file; needed for --ask korean).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The pipeline (cache off) against the same model answering alone, question by question.

    Reads StackEval JSONL (`question`, `answer`) or CoNaLa JSON (`intent`, `snippet`).
    """
    from codeweaver.config import Settings
    from codeweaver.evaluation.answer_systems import (
        bare_system,
        describe,
        loopback_settings,
        model_judge,
        observed,
        pipeline_system,
    )
    from codeweaver.evaluation.answers_eval import (
        evaluate_answers,
        load_answer_cases,
        read_done,
        select_cases,
        summarise,
        with_origins,
    )
    from codeweaver.evaluation.datasets import DatasetError
    from codeweaver.evaluation.stackexchange_corpus import Corpus, CorpusError
    from codeweaver.evaluation.stackexchange_loopback import StackExchangeLoopback, serve_loopback
    from codeweaver.llm.registry import create_chat_model
    from codeweaver.llm.usage import UsageMeter

    server: StackExchangeLoopback | None = None
    try:
        cases = load_answer_cases(file, ask.value)
        cases = select_cases(cases, limit=limit, sample=sample, seed=seed)
        if loopback:
            if corpus_file is None and ask is Ask.KOREAN:
                raise ValueError("--ask korean needs --loopback-corpus (the StackEval file)")
            corpus = Corpus.load(corpus_file or file)
            origins = {hex_id: post.question_id for hex_id, post in corpus.by_hex.items()}
            cases = with_origins(cases, origins)
            server = StackExchangeLoopback(corpus, quota_max=LOOPBACK_QUOTA)
        done = read_done(out) if out else {}
    except (DatasetError, CorpusError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    settings = Settings(model=model) if model else Settings()
    llm = create_chat_model(settings.model, settings)
    meter = UsageMeter()
    meter.attach(llm)
    grader = model_judge(create_chat_model(judge, settings)) if judge else None
    kept = sum(1 for c in cases if c.id in done)
    if kept:
        typer.echo(f"keeping {kept} answered questions from {out}", err=True)

    async def run(progress: Any, run_settings: Settings) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory(prefix="codeweaver-eval-") as root:
            async with pipeline_system(llm, run_settings, Path(root)) as pipeline:
                if server is not None:
                    pipeline = observed(pipeline, server)
                systems = {"pipeline": pipeline, "bare": bare_system(llm)}
                # Load the model before the clock runs: its load time is neither's.
                await systems["bare"]("Reply with OK.")
                sink = out.open("a", encoding="utf-8") if out else None
                try:

                    def keep(row: dict[str, Any]) -> None:
                        if sink:
                            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                            sink.flush()

                    return await evaluate_answers(
                        cases, systems, meter, judge=grader, done=done, on_row=keep,
                        on_progress=progress, code_check=missing_names(run_settings),
                    )  # fmt: skip
                finally:
                    if sink:
                        sink.close()

    with ExitStack() as stack:
        run_settings = settings
        if server is not None:
            base_url = stack.enter_context(serve_loopback(server))
            run_settings = loopback_settings(settings, base_url)
        report = stack.enter_context(progress(len(cases), quiet=as_json, label="answers", every=1))
        rows = asyncio.run(run(report, run_settings))
    summary = summarise(rows, SYSTEMS)
    extra = {"file": str(file), "sample": sample, "seed": seed, "judge": judge, "ask": ask.value}
    if server is not None:
        extra["stackexchange"] = "loopback"
        extra["sources"] = run_settings.enabled_sources
    summary["run"] = describe(settings, extra)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        _print_summary(f"answers on {file} ({settings.model})", summary)


def missing_names(settings: Any) -> Any:
    """The check `eval answers` runs on every final answer (None when switched off)."""
    from codeweaver.factory import build_code_checker

    checker = build_code_checker(settings)
    if checker is None:
        return None
    return lambda answer: sorted({f.finding.name for f in checker.check(answer).findings})
