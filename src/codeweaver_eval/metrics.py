"""Classification metrics as pure functions returning plain dataclasses."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClassMetrics:
    """Precision, recall and F1 of one label; 0.0 where the ratio is undefined."""

    label: str
    precision: float
    recall: float
    f1: float
    support: int
    predicted: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "support": self.support,
            "predicted": self.predicted,
        }


@dataclass(frozen=True)
class ConfusionMatrix:
    """Square counts: `matrix[i][j]` = examples expected `labels[i]`, predicted `labels[j]`."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]

    def count(self, expected: str, predicted: str) -> int:
        return self.matrix[self.labels.index(expected)][self.labels.index(predicted)]

    def to_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "matrix": [list(row) for row in self.matrix]}


@dataclass(frozen=True)
class ClassificationReport:
    """Accuracy, per-label metrics and confusion matrix.

    Macro averages are taken over labels with support > 0, so a declared label that the
    data never contains (or a stray predicted label such as `error`) does not drag them.
    """

    total: int
    correct: int
    accuracy: float
    per_class: tuple[ClassMetrics, ...]
    macro_precision: float
    macro_recall: float
    macro_f1: float
    confusion: ConfusionMatrix

    def for_label(self, label: str) -> ClassMetrics:
        for metrics in self.per_class:
            if metrics.label == label:
                return metrics
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "macro_precision": self.macro_precision,
            "macro_recall": self.macro_recall,
            "macro_f1": self.macro_f1,
            "per_class": {m.label: m.to_dict() for m in self.per_class},
            "confusion": self.confusion.to_dict(),
        }


def ratio(numerator: int, denominator: int) -> float:
    """numerator / denominator, or 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0.0 when both are 0)."""
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


def ordered_labels(
    expected: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = ()
) -> tuple[str, ...]:
    """`labels` first, in their order, then any other label seen, sorted."""
    declared = list(dict.fromkeys(labels))
    extra = sorted((set(expected) | set(predicted)) - set(declared))
    return (*declared, *extra)


def confusion_matrix(
    expected: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = ()
) -> ConfusionMatrix:
    """Confusion matrix over `labels` plus any other label seen in the data."""
    _check_lengths(expected, predicted)
    all_labels = ordered_labels(expected, predicted, labels)
    pairs = Counter(zip(expected, predicted, strict=True))
    matrix = tuple(tuple(pairs[(e, p)] for p in all_labels) for e in all_labels)
    return ConfusionMatrix(all_labels, matrix)


def classification_report(
    expected: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = ()
) -> ClassificationReport:
    """Accuracy, per-label precision/recall/F1/support and the confusion matrix.

    `per_class` lists the declared `labels` and any other label that occurs as an
    expected value; labels seen only among predictions appear in the confusion matrix.
    """
    confusion = confusion_matrix(expected, predicted, labels)
    support = Counter(expected)
    predicted_counts = Counter(predicted)
    declared = set(labels)
    per_class: list[ClassMetrics] = []
    for i, label in enumerate(confusion.labels):
        if label not in declared and support[label] == 0:
            continue
        hits = confusion.matrix[i][i]
        precision = ratio(hits, predicted_counts[label])
        recall = ratio(hits, support[label])
        per_class.append(
            ClassMetrics(
                label=label,
                precision=precision,
                recall=recall,
                f1=f1_score(precision, recall),
                support=support[label],
                predicted=predicted_counts[label],
            )
        )
    present = [m for m in per_class if m.support > 0]
    correct = sum(confusion.matrix[i][i] for i in range(len(confusion.labels)))
    return ClassificationReport(
        total=len(expected),
        correct=correct,
        accuracy=ratio(correct, len(expected)),
        per_class=tuple(per_class),
        macro_precision=_mean([m.precision for m in present]),
        macro_recall=_mean([m.recall for m in present]),
        macro_f1=_mean([m.f1 for m in present]),
        confusion=confusion,
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _check_lengths(expected: Sequence[str], predicted: Sequence[str]) -> None:
    if len(expected) != len(predicted):
        raise ValueError(
            f"expected and predicted differ in length ({len(expected)} != {len(predicted)})"
        )


# --- matching split questions -------------------------------------------------------

_TRAILING = "?？.。!！,，;；:：…~ \t\r\n"
_TOKEN_EDGES = "\"'`()[]{}<>,.;:!?？。！，；：…“”‘’「」『』"
JACCARD_THRESHOLD = 0.6


def normalize_for_scoring(text: str) -> str:
    """NFKC, casefold, collapse whitespace, strip surrounding space and trailing punctuation.

    For scoring split questions only; the answer cache keys questions with its own
    `memory.cache.normalise_question`."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).rstrip(_TRAILING)


def token_jaccard(a: str, b: str) -> float:
    """Jaccard overlap of the normalised whitespace tokens (edge punctuation removed)."""
    left, right = _tokens(a), _tokens(b)
    if not left and not right:
        return 1.0 if normalize_for_scoring(a) == normalize_for_scoring(b) else 0.0
    return len(left & right) / len(left | right)


def jaccard_match(a: str, b: str, threshold: float = JACCARD_THRESHOLD) -> bool:
    """Equal after normalisation, or token Jaccard ≥ `threshold`: a split question matches
    the expected one (not the cache's rule verdict, `memory.verify.same_question`)."""
    return normalize_for_scoring(a) == normalize_for_scoring(b) or token_jaccard(a, b) >= threshold


def questions_match(
    expected: Sequence[str], predicted: Sequence[str], threshold: float = JACCARD_THRESHOLD
) -> bool:
    """True when the lists pair up one-to-one, in any order, under `jaccard_match`."""
    if len(expected) != len(predicted):
        return False
    edges = [
        [j for j, p in enumerate(predicted) if jaccard_match(e, p, threshold)] for e in expected
    ]
    owner: dict[int, int] = {}  # predicted index -> expected index

    def assign(i: int, visited: set[int]) -> bool:
        for j in edges[i]:
            if j in visited:
                continue
            visited.add(j)
            if j not in owner or assign(owner[j], visited):
                owner[j] = i
                return True
        return False

    return all(assign(i, set()) for i in range(len(expected)))


def _tokens(text: str) -> set[str]:
    stripped = (token.strip(_TOKEN_EDGES) for token in normalize_for_scoring(text).split())
    return {token for token in stripped if token}
