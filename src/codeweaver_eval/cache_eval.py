"""`codeweaver eval cache`: the real cache decision on labelled question pairs.

Each side is canonicalised as `analyze_question` does (English kept, anything else put
into English by the model), both are embedded, and `semantic_cache.decide` (threshold,
then verification) says hit or miss. Reported: precision, recall and the false-hit rate
(hits among different-question pairs), overall and per `kind`.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codeweaver.embeddings.base import Embedder
from codeweaver.memory.semantic_cache import decide
from codeweaver.memory.verify import Verdict
from codeweaver_eval.datasets import DatasetError, read_jsonl
from codeweaver_eval.metrics import ratio

# None: the question has no trustworthy key, so the graph would not look it up.
Canonicalise = Callable[[str], Awaitable[str | None]]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Pair:
    line: int
    q1: str
    q2: str
    same: bool
    kind: str


@dataclass
class Counts:
    true_hits: int = 0
    false_hits: int = 0
    missed: int = 0
    true_misses: int = 0

    def add(self, same: bool, hit: bool) -> None:
        if hit and same:
            self.true_hits += 1
        elif hit:
            self.false_hits += 1
        elif same:
            self.missed += 1
        else:
            self.true_misses += 1

    def to_dict(self) -> dict[str, Any]:
        positives = self.true_hits + self.missed
        negatives = self.false_hits + self.true_misses
        return {
            "pairs": positives + negatives,
            "same": positives,
            "different": negatives,
            "hits": self.true_hits + self.false_hits,
            # No hits: precision is undefined, not 0 (nothing wrong was served).
            "precision": (
                ratio(self.true_hits, self.true_hits + self.false_hits)
                if self.true_hits + self.false_hits
                else None
            ),
            "recall": ratio(self.true_hits, positives),
            "false_hit_rate": ratio(self.false_hits, negatives),
        }


@dataclass
class CacheReport:
    threshold: float
    overall: Counts = field(default_factory=Counts)
    by_kind: dict[str, Counts] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            **self.overall.to_dict(),
            "by_kind": {k: c.to_dict() for k, c in sorted(self.by_kind.items())},
            "false_hits": self.examples,
        }


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DatasetError(path, "no such file")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                yield number, dict(row)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(path, f"cannot read CSV: {exc}") from exc


def load_pairs(
    path: str | Path,
    *,
    invert_labels: bool = False,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[Pair]:
    """Pairs from JSONL (`q1`/`q2` or `title1`/`title2`, `label`, optional `kind`) or CSV
    (`question1`/`question2`/`is_duplicate`). `invert_labels` is for sets where 0 means
    "same" (the Korean question pairs). `sample` keeps that many pairs drawn at random
    (reproducibly, by `seed`) from the whole file, in file order: for sets whose
    canonicalisation needs the model and so costs seconds per pair."""
    source = Path(path)
    rows = _csv_rows(source) if source.suffix.lower() == ".csv" else read_jsonl(source)
    pairs: list[Pair] = []
    for line, row in rows:
        q1 = row.get("q1") or row.get("title1") or row.get("question1")
        q2 = row.get("q2") or row.get("title2") or row.get("question2")
        label = row.get("label", row.get("is_duplicate"))
        if not isinstance(q1, str) or not isinstance(q2, str) or not q1.strip() or not q2.strip():
            raise DatasetError(
                source, "needs two questions (q1/q2, title1/title2 or question1/question2)", line
            )
        if str(label).strip() not in {"0", "1"}:
            raise DatasetError(source, f"label must be 0 or 1, got {label!r}", line)
        same = str(label).strip() == "1"
        kind = str(row.get("kind") or ("positive" if same != invert_labels else "negative"))
        pairs.append(Pair(line, q1.strip(), q2.strip(), same != invert_labels, kind))
        if limit is not None and len(pairs) >= limit:
            break
    if not pairs:
        raise DatasetError(source, "no pairs in the file")
    if sample is not None and sample < len(pairs):
        keep = sorted(random.Random(seed).sample(range(len(pairs)), sample))
        pairs = [pairs[i] for i in keep]
    return pairs


async def evaluate_cache(
    pairs: list[Pair],
    embedder: Embedder,
    canonicalise: Canonicalise,
    *,
    threshold: float,
    on_progress: Progress | None = None,
    batch: int = 16,
) -> CacheReport:
    report = CacheReport(threshold)
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        firsts = [await canonicalise(p.q1) for p in chunk]
        seconds = [await canonicalise(p.q2) for p in chunk]
        vectors = embedder.embed([k or "" for k in firsts + seconds])
        cosines = np.sum(vectors[: len(chunk)] * vectors[len(chunk) :], axis=1)
        for pair, key1, key2, cosine in zip(chunk, firsts, seconds, cosines, strict=True):
            one, two = key1 or pair.q1, key2 or pair.q2
            if key1 is None or key2 is None:
                verdict = Verdict(False, "no trustworthy English key")
            else:
                verdict = decide(one, two, float(cosine), threshold)
            report.overall.add(pair.same, verdict.same)
            report.by_kind.setdefault(pair.kind, Counts()).add(pair.same, verdict.same)
            if verdict.same and not pair.same and len(report.examples) < 20:
                report.examples.append(
                    {"line": pair.line, "q1": one, "q2": two, "cosine": round(float(cosine), 3)}
                )
        if on_progress:
            on_progress(min(start + batch, len(pairs)), len(pairs))
    return report
