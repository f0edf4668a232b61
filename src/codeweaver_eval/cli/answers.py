"""`codeweaver eval answers`: the pipeline against the bare model, side by side."""

from __future__ import annotations

import asyncio
import json
import tempfile
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codeweaver_eval.cli.common import FileOpt, JsonOpt, LimitOpt, ModelOpt
from codeweaver_eval.cli.progress import progress

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codeweaver_eval.answers_eval import AnswerCase

SYSTEMS = ("pipeline", "bare")
# A loopback run never runs out of quota: the quota is not what it measures.
LOOPBACK_QUOTA = 100_000
# A live run's default request budget per question: a search is at most three requests
# (search, similar, answers) and an answer makes one or two searches.
LIVE_REQUESTS_PER_QUESTION = 8
KEY_PAGE = "https://stackapps.com/apps/oauth/register"
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
# Shown when the questions' origin posts were served (`--stackexchange-loopback`), or
# matched by title on the real API (`--stackexchange-live`).
ORIGIN_ROWS = [
    ("origin post returned by the API", "origin_served", "{}"),
    ("origin post among the sources", "origin_found", "{}"),
    ("answers citing the origin post", "cites_origin", "{}"),
    ("  share citing the origin post", "cites_origin_rate", "{:.1%}"),
    ("origin post's median place in the results", "origin_rank_median", "{:g}"),
    ("origin post first in the results", "origin_rank_first", "{}"),
    ("longest query sent (chars)", "max_query_chars", "{}"),
]


class Ask(StrEnum):
    POST = "post"
    TITLE = "title"
    KOREAN = "korean"


def _cell(value: Any, fmt: str) -> str:
    return "—" if value is None else fmt.format(value)


def _origin_titles(
    cases: Sequence[AnswerCase], ask: Ask, corpus_file: Path | None
) -> dict[str, str]:
    """Question asked → title of the post it came from (its first line; for `--ask
    korean`, the title in the StackEval file)."""
    from codeweaver_eval.datasets import split_post

    if ask is not Ask.KOREAN:
        return {case.question: split_post(case.question)[0] for case in cases}
    if corpus_file is None:
        raise ValueError("--ask korean needs --loopback-corpus (the StackEval file)")
    from codeweaver_eval.stackexchange.corpus import Corpus

    posts = Corpus.load(corpus_file).by_hex
    missing = [case.id for case in cases if case.id not in posts]
    if missing:
        raise ValueError(f"{len(missing)} questions are not in {corpus_file}: {missing[:5]}")
    return {case.question: posts[case.id].title for case in cases}


def _every_question(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for the summary of a live run, each question counted. There an origin is known
    only once a search returned it (matched by title): a question whose post never came
    back still counts, as a miss."""
    return [r if r.get("origin") is not None else {**r, "origin": "not returned"} for r in rows]


def _live_consent(questions: int, budget: int, host: str, yes: bool) -> None:
    """Say what a live run sends where; unless `yes`, ask (declining exits 1)."""
    typer.echo(
        f"Live Stack Exchange run: {questions} questions, at most {budget} requests to "
        f"{host} with your key (STACKEXCHANGE_KEY).\n"
        "Sent to it: only search text derived from the questions' titles and posts "
        "(`q`, `title`, `tagged`) and the ids of the questions it returned; web, GitHub "
        "and Tavily stay off.\n"
        f"request budget: {budget}",
        err=True,
    )
    if yes:
        return
    try:
        agreed = typer.confirm("Run it?", default=False, err=True)
    except typer.Abort:  # no terminal to answer from (stdin closed): no consent
        agreed = False
    if not agreed:
        typer.echo("\nnot run: no request was made (--yes consents without asking)", err=True)
        raise typer.Exit(1)


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
            help="StackEval JSONL the loopback serves (default: --file; needed for --ask "
            "korean, also with --stackexchange-live, for the posts' titles).",
        ),
    ] = None,
    distractors_dir: Annotated[
        Path | None,
        typer.Option(
            "--loopback-distractors",
            help="A data folder laid out as the project's shared data: its other public "
            "post sets (AskUbuntu, CoNaLa, CS1QA, chat-langchain; about 9,200 posts) are "
            "served beside StackEval's, so each search meets competition.",
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option(
            "--stackexchange-live",
            help="Stack Overflow searches the real Stack Exchange API (needs STACKEXCHANGE_KEY "
            "and your consent) through a local relay that keeps a request budget; web/GitHub/"
            "Tavily stay off; each answer is checked for citing the post its question came "
            "from, found among the returned posts by its title.",
        ),
    ] = False,
    request_budget: Annotated[
        int | None,
        typer.Option(
            "--request-budget",
            min=0,
            help="Most requests a --stackexchange-live run sends upstream "
            f"(default: {LIVE_REQUESTS_PER_QUESTION} per question).",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Consent to the --stackexchange-live run without asking.")
    ] = False,
    live_upstream: Annotated[
        str | None,
        typer.Option(
            "--live-upstream",
            help="For testing the relay: the API base URL it forwards to instead of "
            "https://api.stackexchange.com/2.3.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The pipeline (cache off) against the same model answering alone, question by question.

    Reads StackEval JSONL (`question`, `answer`) or CoNaLa JSON (`intent`, `snippet`).
    """
    from codeweaver.config import Settings
    from codeweaver.llm.registry import create_chat_model
    from codeweaver.llm.usage import UsageMeter
    from codeweaver.sources.stackoverflow import API_BASE
    from codeweaver_eval.answer_systems import (
        bare_system,
        describe,
        loopback_settings,
        model_judge,
        observed,
        pipeline_system,
    )
    from codeweaver_eval.answers_eval import (
        evaluate_answers,
        load_answer_cases,
        read_done,
        select_cases,
        with_origins,
    )
    from codeweaver_eval.answers_summary import summarise
    from codeweaver_eval.datasets import DatasetError
    from codeweaver_eval.stackexchange.corpus import Corpus, CorpusError
    from codeweaver_eval.stackexchange.distractors import Distractors, load_distractors
    from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback
    from codeweaver_eval.stackexchange.relay import (
        StackExchangeRelay,
        observed_live,
        origin_by_title,
        relay_settings,
        serve_relay,
    )

    def refuse(message: str) -> typer.Exit:
        typer.echo(f"error: {message}", err=True)
        return typer.Exit(2)

    if live and loopback:
        raise refuse("--stackexchange-live and --stackexchange-loopback exclude each other")
    if distractors_dir is not None and not loopback:
        raise refuse("--loopback-distractors only applies to --stackexchange-loopback")
    if not live and (request_budget is not None or live_upstream is not None):
        raise refuse("--request-budget and --live-upstream only apply to --stackexchange-live")
    settings = Settings(model=model) if model else Settings()
    key = settings.stackexchange_key.get_secret_value() if settings.stackexchange_key else ""
    if live and not key:
        raise refuse(
            "--stackexchange-live needs STACKEXCHANGE_KEY, an app key: register one at "
            f"{KEY_PAGE}. Without a key the API allows 300 requests a day, which a run "
            "would use up."
        )
    server: StackExchangeLoopback | None = None
    distractors: Distractors | None = None
    relay: StackExchangeRelay | None = None
    titles: dict[str, str] = {}
    try:
        cases = load_answer_cases(file, ask.value)
        cases = select_cases(cases, limit=limit, sample=sample, seed=seed)
        if loopback:
            if corpus_file is None and ask is Ask.KOREAN:
                raise ValueError("--ask korean needs --loopback-corpus (the StackEval file)")
            distractors = load_distractors(distractors_dir) if distractors_dir else None
            corpus = Corpus.load(corpus_file or file, distractors.posts if distractors else ())
            origins = {hex_id: post.question_id for hex_id, post in corpus.by_hex.items()}
            cases = with_origins(cases, origins)
            server = StackExchangeLoopback(corpus, quota_max=LOOPBACK_QUOTA)
        if live:
            titles = _origin_titles(cases, ask, corpus_file)
        done = read_done(out) if out else {}
    except (DatasetError, CorpusError, ValueError) as exc:
        raise refuse(str(exc)) from None
    if live:
        to_answer = sum(1 for c in cases if c.id not in done)
        budget = (
            request_budget if request_budget is not None else LIVE_REQUESTS_PER_QUESTION * to_answer
        )
        timeout = max(1.0, settings.http_timeout - 1.0)  # under the client's own
        relay = StackExchangeRelay(
            key, budget=budget, upstream=live_upstream or API_BASE, timeout=timeout
        )
        _live_consent(to_answer, budget, relay.host, yes)
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
                elif relay is not None:
                    pipeline = observed_live(pipeline, relay, titles)
                systems = {"pipeline": pipeline, "bare": bare_system(llm)}
                # Load the model before the clock runs: its load time is neither's.
                await systems["bare"]("Reply with OK.")
                sink = out.open("a", encoding="utf-8") if out else None
                try:

                    def keep(row: dict[str, Any]) -> None:
                        if relay is not None:  # the post found by title, or None
                            origin = origin_by_title(relay, titles.get(row["question"], ""))
                            row["origin"], row["origin_matched_by"] = origin, "title"
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
        elif relay is not None:
            base_url = stack.enter_context(serve_relay(relay))
            run_settings = relay_settings(settings, base_url)
        report = stack.enter_context(progress(len(cases), quiet=as_json, label="answers", every=1))
        rows = asyncio.run(run(report, run_settings))
    summary = summarise(_every_question(rows) if relay is not None else rows, SYSTEMS)
    extra: dict[str, Any] = {
        "file": str(file),
        "sample": sample,
        "seed": seed,
        "judge": judge,
        "ask": ask.value,
    }
    if server is not None:
        extra["stackexchange"] = "loopback"
        extra["sources"] = run_settings.enabled_sources
        extra["posts_served"] = len(server.corpus.posts)
        if distractors is not None:
            extra["distractors"] = distractors.counts
    if relay is not None:
        extra["stackexchange"] = "live"
        extra["sources"] = run_settings.enabled_sources
        extra["origin_matched_by"] = "title"
        extra["request_budget"] = relay.budget
        extra["requests_used"] = relay.used
        if relay.upstream != API_BASE:
            extra["upstream"] = relay.upstream
    summary["run"] = describe(settings, extra)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        _print_summary(f"answers on {file} ({settings.model})", summary)
    if relay is not None:
        typer.echo(f"requests to {relay.host}: {relay.used} of {relay.budget}", err=True)


def missing_names(settings: Any) -> Any:
    """The check `eval answers` runs on every final answer (None when switched off)."""
    from codeweaver.factory import build_code_checker

    checker = build_code_checker(settings)
    if checker is None:
        return None
    return lambda answer: sorted({f.finding.name for f in checker.check(answer).findings})
