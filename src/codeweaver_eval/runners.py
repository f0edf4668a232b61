"""Run a classifier or planner over an evaluation set and build a report.

A failing prediction never stops a run: it is recorded with the label `error` and counted.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from codeweaver_eval.datasets import INTENT_LABELS, PLAN_CASES, IntentExample, SplitExample
from codeweaver_eval.metrics import (
    ClassificationReport,
    ConfusionMatrix,
    classification_report,
    questions_match,
    ratio,
)

logger = logging.getLogger(__name__)

ERROR_LABEL = "error"
"""Predicted label recorded when the classifier or planner raised."""

Classify = Callable[[str], Awaitable[tuple[str, bool]]]
PlanResult = tuple[str, list[str]] | tuple[str, list[str], str]
"""(case, questions) or (case, questions, who decided: one of `DECIDERS`)."""
Plan = Callable[[str], Awaitable[PlanResult]]
Progress = Callable[[int, int], None]

DECIDERS: tuple[str, ...] = ("rules", "model")
"""Who settled a plan: the deterministic rules, or the model they left it to."""

R = TypeVar("R")


@dataclass(frozen=True)
class IntentPrediction:
    line: int
    expected: str
    predicted: str
    used_fallback: bool
    error: str | None = None

    @property
    def correct(self) -> bool:
        return self.expected == self.predicted

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "expected": self.expected,
            "predicted": self.predicted,
            "correct": self.correct,
            "used_fallback": self.used_fallback,
            "error": self.error,
        }


@dataclass(frozen=True)
class IntentReport:
    """Intent metrics plus how often the classifier fell back to its default or failed."""

    metrics: ClassificationReport
    fallbacks: int
    fallbacks_by_predicted: Mapping[str, int]
    errors: int
    predictions: tuple[IntentPrediction, ...]

    def to_dict(self, *, include_predictions: bool = False) -> dict[str, Any]:
        data = self.metrics.to_dict()
        data["fallbacks"] = self.fallbacks
        data["fallback_rate"] = ratio(self.fallbacks, self.metrics.total)
        data["fallbacks_by_predicted"] = dict(self.fallbacks_by_predicted)
        data["errors"] = self.errors
        if include_predictions:
            data["predictions"] = [p.to_dict() for p in self.predictions]
        return data


@dataclass(frozen=True)
class SplitPrediction:
    line: int
    message: str
    expected_case: str
    predicted_case: str
    expected_questions: tuple[str, ...]
    predicted_questions: tuple[str, ...]
    fully_correct: bool
    error: str | None = None
    decided_by: str | None = None  # one of DECIDERS, when the planner says

    @property
    def case_correct(self) -> bool:
        return self.expected_case == self.predicted_case

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "message": self.message,
            "expected_case": self.expected_case,
            "predicted_case": self.predicted_case,
            "expected_questions": list(self.expected_questions),
            "predicted_questions": list(self.predicted_questions),
            "case_correct": self.case_correct,
            "fully_correct": self.fully_correct,
            "error": self.error,
            "decided_by": self.decided_by,
        }


@dataclass(frozen=True)
class CaseCounts:
    """Per expected case: how many there were, were predicted, were right, and how many
    of its plans the rules and the model settled."""

    case: str
    support: int
    predicted: int
    case_correct: int
    fully_correct: int
    decided_by: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "support": self.support,
            "predicted": self.predicted,
            "case_correct": self.case_correct,
            "fully_correct": self.fully_correct,
            "decided_by": _deciders(self.decided_by),
        }


@dataclass(frozen=True)
class SplitReport:
    """Share of messages whose case is right, share fully right, per-case counts."""

    total: int
    case_correct: int
    fully_correct: int
    errors: int
    per_case: tuple[CaseCounts, ...]
    cases: ClassificationReport
    predictions: tuple[SplitPrediction, ...]
    decided_by: Mapping[str, int] = field(default_factory=dict)

    @property
    def case_accuracy(self) -> float:
        return ratio(self.case_correct, self.total)

    @property
    def full_accuracy(self) -> float:
        return ratio(self.fully_correct, self.total)

    @property
    def confusion(self) -> ConfusionMatrix:
        return self.cases.confusion

    def to_dict(self, *, include_predictions: bool = False) -> dict[str, Any]:
        per_class = {m.label: m for m in self.cases.per_class}
        per_case: dict[str, Any] = {}
        for counts in self.per_case:
            entry = counts.to_dict()
            metrics = per_class.get(counts.case)
            if metrics is not None:
                entry.update(precision=metrics.precision, recall=metrics.recall, f1=metrics.f1)
            per_case[counts.case] = entry
        data: dict[str, Any] = {
            "total": self.total,
            "case_correct": self.case_correct,
            "fully_correct": self.fully_correct,
            "case_accuracy": self.case_accuracy,
            "full_accuracy": self.full_accuracy,
            "errors": self.errors,
            "decided_by": _deciders(self.decided_by),
            "per_case": per_case,
            "confusion": self.confusion.to_dict(),
        }
        if include_predictions:
            data["predictions"] = [p.to_dict() for p in self.predictions]
        return data


def _deciders(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts for every decider, zero included, then any other label the planner gave."""
    return {**dict.fromkeys(DECIDERS, 0), **counts}


async def evaluate_intent(
    examples: Iterable[IntentExample],
    classify: Classify,
    *,
    concurrency: int = 1,
    on_progress: Progress | None = None,
) -> IntentReport:
    """Classify every example (at most `concurrency` at once) and report the metrics."""
    items = list(examples)
    predictions = await _run_bounded(
        [_intent_job(example, classify) for example in items], concurrency, on_progress
    )
    metrics = classification_report(
        [p.expected for p in predictions], [p.predicted for p in predictions], INTENT_LABELS
    )
    fallbacks = Counter(p.predicted for p in predictions if p.used_fallback)
    return IntentReport(
        metrics=metrics,
        fallbacks=sum(fallbacks.values()),
        fallbacks_by_predicted=dict(sorted(fallbacks.items())),
        errors=sum(1 for p in predictions if p.error is not None),
        predictions=tuple(predictions),
    )


async def evaluate_split(
    examples: Iterable[SplitExample],
    plan: Plan,
    *,
    concurrency: int = 1,
    on_progress: Progress | None = None,
) -> SplitReport:
    """Plan every message and report how often the case, and the split, are right."""
    items = list(examples)
    predictions = await _run_bounded(
        [_split_job(example, plan) for example in items], concurrency, on_progress
    )
    cases = classification_report(
        [p.expected_case for p in predictions],
        [p.predicted_case for p in predictions],
        PLAN_CASES,
    )
    per_case = tuple(
        CaseCounts(
            case=case,
            support=sum(1 for p in predictions if p.expected_case == case),
            predicted=sum(1 for p in predictions if p.predicted_case == case),
            case_correct=sum(1 for p in predictions if p.expected_case == case and p.case_correct),
            fully_correct=sum(
                1 for p in predictions if p.expected_case == case and p.fully_correct
            ),
            decided_by=_count_deciders(p for p in predictions if p.expected_case == case),
        )
        for case in cases.confusion.labels
    )
    return SplitReport(
        total=len(predictions),
        case_correct=sum(1 for p in predictions if p.case_correct),
        fully_correct=sum(1 for p in predictions if p.fully_correct),
        errors=sum(1 for p in predictions if p.error is not None),
        per_case=per_case,
        cases=cases,
        predictions=tuple(predictions),
        decided_by=_count_deciders(predictions),
    )


def _count_deciders(predictions: Iterable[SplitPrediction]) -> dict[str, int]:
    return dict(Counter(p.decided_by for p in predictions if p.decided_by is not None))


def _intent_job(
    example: IntentExample, classify: Classify
) -> Callable[[], Awaitable[IntentPrediction]]:
    async def job() -> IntentPrediction:
        try:
            intent, used_fallback = await classify(example.question)
            if not isinstance(intent, str):
                raise TypeError(f"classifier returned {type(intent).__name__}, not str")
        except Exception as exc:
            logger.debug("classify failed on line %d", example.line, exc_info=True)
            return IntentPrediction(
                example.line, example.intent, ERROR_LABEL, False, _describe(exc)
            )
        return IntentPrediction(example.line, example.intent, intent, bool(used_fallback))

    return job


def _split_job(example: SplitExample, plan: Plan) -> Callable[[], Awaitable[SplitPrediction]]:
    expected = example.expected_case

    async def job() -> SplitPrediction:
        try:
            case, questions, *decider = await plan(example.message)
            if not isinstance(case, str):
                raise TypeError(f"planner returned case {type(case).__name__}, not str")
            predicted = _as_questions(questions)
        except Exception as exc:
            logger.debug("plan failed on line %d", example.line, exc_info=True)
            return SplitPrediction(
                example.line,
                example.message,
                expected,
                ERROR_LABEL,
                example.questions,
                (),
                False,
                _describe(exc),
            )
        fully = case == expected and (
            case != "multiple_questions" or questions_match(example.questions, predicted)
        )
        return SplitPrediction(
            example.line,
            example.message,
            expected,
            case,
            example.questions,
            predicted,
            fully,
            decided_by=decider[0] if decider else None,
        )

    return job


def _as_questions(questions: object) -> tuple[str, ...]:
    if not isinstance(questions, list | tuple) or not all(isinstance(q, str) for q in questions):
        raise TypeError("planner must return a list of question strings")
    return tuple(questions)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _run_bounded(
    jobs: Sequence[Callable[[], Awaitable[R]]],
    concurrency: int,
    on_progress: Progress | None,
) -> list[R]:
    """Run `jobs` at most `concurrency` at a time; results keep the jobs' order."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    semaphore = asyncio.Semaphore(concurrency)

    async def run(index: int, job: Callable[[], Awaitable[R]]) -> tuple[int, R]:
        async with semaphore:
            return index, await job()

    tasks = [asyncio.ensure_future(run(i, job)) for i, job in enumerate(jobs)]
    results: dict[int, R] = {}
    try:
        for done, future in enumerate(asyncio.as_completed(tasks), start=1):
            index, value = await future
            results[index] = value
            if on_progress is not None:
                on_progress(done, len(tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return [results[i] for i in range(len(tasks))]
