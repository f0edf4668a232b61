"""Fit the installed-docs score model and choose its threshold on CoNaLa questions.

`answer_usage` counts, per documented name, the questions whose reference answers use it
(the prior `installed_docs.usage.ANSWER_USAGE`; count it on the calibration part only).
`collect` ranks each question's candidates (all features, no threshold) and labels each
candidate with the hit rule of `retrieval_names`; `fit_logistic` fits the logistic model of
`ranking.SCORE_MODEL` (Newton's method, a small L2 penalty); `sweep` reports, per threshold,
what the source would return: recall@k, MRR, the share of questions with no result and the
share of top-1 results that are hits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from codeweaver.sources.installed_docs.ranking import Candidate, logistic
from codeweaver_eval.retrieval_eval import RetrievalQuestion, question_uses
from codeweaver_eval.retrieval_names import is_hit


@dataclass(frozen=True)
class Labelled:
    question_id: int
    rank: int  # 1-based, in fused order
    features: tuple[float, ...]
    hit: bool


def answer_usage(
    questions: Sequence[RetrievalQuestion], catalogue: Mapping[str, str]
) -> dict[str, int]:
    """Documented name -> how many questions use it in a reference snippet (the hit rule)."""
    by_leaf: dict[str, list[str]] = {}
    for name in catalogue:
        by_leaf.setdefault(name.rpartition(".")[2], []).append(name)
    known = frozenset(name.partition(".")[0] for name in catalogue)
    counts: Counter[str] = Counter()
    for question in questions:
        uses = question_uses(question, known)
        counts.update(
            {
                name
                for use in uses
                for name in by_leaf.get(use.name, ())
                if is_hit(uses, name, catalogue[name] == "python")
            }
        )
    return dict(sorted(counts.items()))


def collect(
    questions: Sequence[RetrievalQuestion],
    rank: Callable[[str], list[Candidate]],
    catalogue: Mapping[str, str],
) -> list[Labelled]:
    known = frozenset(name.partition(".")[0] for name in catalogue)
    rows: list[Labelled] = []
    for question in questions:
        uses = question_uses(question, known)
        for position, candidate in enumerate(rank(question.intent), 1):
            name = candidate.entry.name
            package = catalogue.get(name)
            hit = package is not None and is_hit(uses, name, package == "python")
            rows.append(Labelled(question.question_id, position, candidate.features(), hit))
    return rows


def fit_logistic(rows: Sequence[Labelled], l2: float = 1e-2, steps: int = 50) -> tuple[float, ...]:
    """(intercept, weights...) maximising the penalised likelihood of the hit labels."""
    x = np.array([(1.0, *r.features) for r in rows], dtype=np.float64)
    y = np.array([r.hit for r in rows], dtype=np.float64)
    w = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return tuple(float(v) for v in w)


def sweep(
    rows: Sequence[Labelled],
    model: tuple[float, ...],
    thresholds: Sequence[float],
    questions: int,
    k: int = 5,
) -> list[dict[str, Any]]:
    """What the source returns at each threshold (candidates re-sorted by score)."""
    by_question: dict[int, list[tuple[float, bool]]] = {}
    for row in rows:
        by_question.setdefault(row.question_id, []).append((logistic(row.features, model), row.hit))
    table: list[dict[str, Any]] = []
    for threshold in thresholds:
        found = answered = top_hits = 0
        reciprocal = 0.0
        for scored in by_question.values():
            kept = sorted((s for s in scored if s[0] >= threshold), key=lambda s: -s[0])[:k]
            if not kept:
                continue
            answered += 1
            top_hits += kept[0][1]
            first = next((i for i, (_, hit) in enumerate(kept, 1) if hit), None)
            if first:
                found += 1
                reciprocal += 1.0 / first
        table.append(
            {
                "threshold": threshold,
                "recall_at_k": found / questions if questions else 0.0,
                "mrr": reciprocal / questions if questions else 0.0,
                "empty_share": 1 - answered / questions if questions else 0.0,
                "top1_precision": top_hits / answered if answered else 0.0,
            }
        )
    return table
