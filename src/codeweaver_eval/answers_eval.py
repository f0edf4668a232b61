"""The pipeline against the bare model it runs on, question by question, in one run.

Each question is answered by every system in turn, alternating which goes first, so the
machine's noise falls on both alike. Per answer: wall time, model calls and tokens (from
a `UsageMeter` on the shared model), drafts, warnings, the plan's case, the sources
cited, and the reference identifier recall; with a judge, a blind verdict. A row is
handed to `on_row` as soon as it is complete, so an interrupted run keeps its rows and a
rerun skips them (`done`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codeweaver.llm.usage import UsageMeter
from codeweaver.words.language import IN_LANGUAGE, detect_language, is_english, language_share
from codeweaver_eval.datasets import DatasetError, read_json_array, read_jsonl, split_post
from codeweaver_eval.identifiers import found_in, identifiers

logger = logging.getLogger(__name__)

VERDICTS = ("acceptable", "partial", "unacceptable")
# How a StackEval question is asked: the pasted post, its title line, or (`korean`) the
# `question` of a translated file whose rows keep StackEval's `questionId`.
ASK_MODES = ("post", "title", "korean")


@dataclass(frozen=True)
class AnswerCase:
    """One question with its reference answer (Markdown, or a bare code snippet)."""

    id: str
    question: str
    reference: str
    reference_is_code: bool = False
    # The Stack Overflow question id of the post the question came from, when served.
    origin: int | None = None


@dataclass(frozen=True)
class Answered:
    """What a system returned, beyond the text: filled by the pipeline, empty for bare."""

    answer: str
    drafts: int = 1
    warnings: int = 0
    plan_case: str | None = None
    sources: int = 0
    sources_cited: int = 0
    # The English form the search used, for questions in another language.
    search_queries: tuple[str, ...] = ()
    # `reference url` of each source, in citation order; None: the system has no sources.
    source_refs: tuple[str, ...] | None = None
    cited_refs: tuple[str, ...] = ()
    # What the Stack Exchange loopback saw while answering: the posts it returned
    # (`stackoverflow:q<id>`) and the longest `q`/`title` sent.
    served_refs: tuple[str, ...] = ()
    max_query_chars: int | None = None
    # The best place each post held in a search's results (1 = first), by reference.
    served_ranks: tuple[tuple[str, int], ...] = ()
    # The origin post's id when the run found it out itself (the real API: the returned
    # post whose title is the question's); a case's own `origin` comes first.
    origin: int | None = None


Answer = Callable[[str], Awaitable[Answered]]
Judge = Callable[[str, str, str], Awaitable[str]]
RowSink = Callable[[dict[str, Any]], None]
Progress = Callable[[int, int, str], None]
# The names an answer's code uses that are missing at the installed versions.
CodeCheck = Callable[[str], list[str]]


@dataclass
class SystemRun:
    answer: str = ""
    seconds: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    drafts: int = 0
    warnings: int = 0
    plan_case: str | None = None
    sources: int = 0
    sources_cited: int = 0
    search_queries: list[str] = field(default_factory=list)
    recall: float | None = None
    found: list[str] = field(default_factory=list)
    # Share of the answer's prose in the question's language, and whether that is enough.
    language_share: float | None = None
    in_question_language: bool = True
    searched_in_english: bool | None = None
    # The question's origin post: returned by the API, among the sources, cited.
    origin_served: bool | None = None
    origin_found: bool | None = None
    cites_origin: bool | None = None
    # Its best place among a search's results (1 = first); None: never returned.
    origin_rank: int | None = None
    max_query_chars: int | None = None
    verdict: str | None = None
    error: str | None = None
    # What the final answer's code uses that is missing at the installed versions (None:
    # not checked).
    missing_apis: list[str] | None = None


# --------------------------------------------------------------------------- data


def load_answer_cases(path: Path, ask: str = "post") -> list[AnswerCase]:
    """StackEval JSONL (`question`, `answer`) or CoNaLa JSON (`intent`, `snippet`).

    `ask="title"` keeps only a StackEval question's title line.
    """
    if ask not in ASK_MODES:
        raise ValueError(f"ask must be one of {', '.join(ASK_MODES)}")
    if not path.is_file():
        raise DatasetError(path, "no such file")
    if path.suffix == ".json":
        rows = read_json_array(path, "a JSON array (a CoNaLa file)")
        cases = []
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or not all(
                isinstance(row.get(k), str) and row[k].strip() for k in ("intent", "snippet")
            ):
                raise DatasetError(path, f"item {index} needs `intent` and `snippet` text")
            ident = str(row.get("question_id", index))
            cases.append(AnswerCase(f"{ident}:{index}", row["intent"], row["snippet"], True))
        return cases
    cases = []
    for line, row in read_jsonl(path):
        question, answer = row.get("question"), row.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str) or not question.strip():
            raise DatasetError(path, "needs `question` and `answer` text", line)
        asked = split_post(question)[0] if ask == "title" else question.strip()
        cases.append(AnswerCase(str(row.get("questionId") or row.get("id") or line), asked, answer))
    return cases


_POST_REF = r"(?:stackoverflow:q|stackoverflow\.com/questions/|stackoverflow\.com/q/){}(?!\d)"


def is_post(ref: str, question_id: int) -> bool:
    """Whether a source's `reference url` names Stack Overflow question `question_id`."""
    return re.search(_POST_REF.format(question_id), ref) is not None


def origin_checks(got: Answered, origin: int) -> tuple[bool, bool, bool]:
    """(returned by the API, among the answer's sources, cited by the answer)."""
    return (
        any(is_post(ref, origin) for ref in got.served_refs),
        any(is_post(ref, origin) for ref in got.source_refs or ()),
        any(is_post(ref, origin) for ref in got.cited_refs),
    )


def origin_rank(got: Answered, origin: int) -> int | None:
    """The origin post's best place among the results of the searches made (1 = first)."""
    return min((rank for ref, rank in got.served_ranks if is_post(ref, origin)), default=None)


def with_origins(cases: Sequence[AnswerCase], origins: Mapping[str, int]) -> list[AnswerCase]:
    """`cases` with the id of the post each came from, looked up by case id (`questionId`)."""
    missing = [case.id for case in cases if case.id not in origins]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ValueError(f"{len(missing)} questions are not in the served corpus: {shown}")
    return [replace(case, origin=origins[case.id]) for case in cases]


def select_cases(
    cases: Sequence[AnswerCase],
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[AnswerCase]:
    """A seeded sample (in file order), or the first `limit` cases."""
    chosen = list(cases)
    if sample is not None and sample < len(chosen):
        picked = sorted(random.Random(seed).sample(range(len(chosen)), sample))
        chosen = [chosen[i] for i in picked]
    return chosen[:limit] if limit is not None else chosen


def read_done(path: Path) -> dict[str, dict[str, Any]]:
    """Complete rows of an earlier run of the same output file, by case id.

    A line cut short by an interrupted run is skipped: that question is answered again.
    """
    if not path.is_file():
        return {}
    done: dict[str, dict[str, Any]] = {}
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(raw)
        except json.JSONDecodeError:
            continue
        complete = isinstance(row, dict) and isinstance(row.get("systems"), dict)
        if complete and isinstance(row.get("id"), str):
            done[row["id"]] = row
    return done


# --------------------------------------------------------------------------- running


async def _run_one(
    case: AnswerCase,
    answer: Answer,
    meter: UsageMeter,
    names: set[str],
    code_check: CodeCheck | None = None,
) -> SystemRun:
    before = meter.snapshot()
    started = time.perf_counter()
    run = SystemRun()
    try:
        got = await answer(case.question)
    except Exception as exc:  # one failing answer never stops the run
        logger.warning("answering %s failed: %s", case.id, exc)
        run.error = f"{type(exc).__name__}: {exc}"
        got = Answered("", drafts=0)
    run.seconds = round(time.perf_counter() - started, 2)
    used = meter.snapshot() - before
    run.calls, run.prompt_tokens, run.completion_tokens = (
        used.calls,
        used.prompt_tokens,
        used.completion_tokens,
    )
    run.answer, run.drafts, run.warnings = got.answer, got.drafts, got.warnings
    run.plan_case, run.sources, run.sources_cited = got.plan_case, got.sources, got.sources_cited
    run.search_queries = list(got.search_queries)
    language = detect_language(case.question)
    share = language_share(got.answer, language)
    run.language_share = None if share is None else round(share, 3)
    run.in_question_language = share is None or share >= IN_LANGUAGE
    if language != "en" and got.search_queries:
        run.searched_in_english = any(is_english(q) for q in got.search_queries)
    run.max_query_chars = got.max_query_chars
    origin = case.origin if case.origin is not None else got.origin
    if origin is not None and got.source_refs is not None:
        run.origin_served, run.origin_found, run.cites_origin = origin_checks(got, origin)
        run.origin_rank = origin_rank(got, origin)
    if names:
        hits = found_in(names, got.answer)
        run.recall = round(len(hits) / len(names), 4)
        run.found = sorted(hits)
    if code_check is not None and got.answer:  # after the clock: the same check for both
        run.missing_apis = await asyncio.to_thread(code_check, got.answer)
    return run


async def evaluate_answers(
    cases: Sequence[AnswerCase],
    systems: Mapping[str, Answer],
    meter: UsageMeter,
    *,
    judge: Judge | None = None,
    done: Mapping[str, dict[str, Any]] | None = None,
    on_row: RowSink | None = None,
    on_progress: Progress | None = None,
    code_check: CodeCheck | None = None,
) -> list[dict[str, Any]]:
    """Every case answered by every system, alternating the order; rows in case order.
    `code_check`: what each final answer's code uses that is not installed."""
    done = done or {}
    order = list(systems)
    rows: list[dict[str, Any]] = []
    for index, case in enumerate(cases):
        if case.id in done:
            rows.append(done[case.id])
            if on_progress:
                on_progress(index + 1, len(cases), "kept from the earlier run")
            continue
        names = identifiers(case.reference, is_code=case.reference_is_code)
        runs: dict[str, SystemRun] = {}
        turn = order if index % 2 == 0 else list(reversed(order))
        for name in turn:
            if on_progress:
                on_progress(index, len(cases), name)
            runs[name] = await _run_one(case, systems[name], meter, names, code_check)
        if judge is not None:
            for name in sorted(runs):  # the judge sees one answer at a time, unlabelled
                runs[name].verdict = await _judged(judge, case, runs[name].answer)
        row: dict[str, Any] = {
            "id": case.id,
            "question": case.question,
            "reference_identifiers": sorted(names),
            "first": turn[0],
            "systems": {name: asdict(runs[name]) for name in order},
        }
        if case.origin is not None:
            row["origin"] = case.origin
        rows.append(row)
        if on_row:
            on_row(row)
        if on_progress:
            on_progress(index + 1, len(cases), "done")
    return rows


async def _judged(judge: Judge, case: AnswerCase, answer: str) -> str | None:
    if not answer.strip():
        return "unacceptable"
    try:
        return await judge(case.question, case.reference, answer)
    except Exception as exc:
        logger.warning("judging %s failed: %s", case.id, exc)
        return None
