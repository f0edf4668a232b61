"""`codeweaver eval retrieval`: does a docs search find the page of the API the answer uses?

Data: CoNaLa-format rows (`intent`, `snippet`, `question_id`; a JSON array or JSONL). Rows
sharing a `question_id` are one question (its first `intent` is the query) whose reference
snippets are all of theirs. A result is a *hit* when it documents a function, method, class
or property one of the snippets uses (the rule is in `retrieval_names`).

Reported: recall@k (share of questions with at least one hit in the top k), MRR over the top
k, the ceiling (questions with at least one used name documented in the index at all), the
share of questions for which the search returns nothing, the share of returned top-1 results
that are hits, and the share of all returned results that are hits.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from codeweaver.agent.state import SearchResult
from codeweaver_eval.datasets import DatasetError, read_json_array, read_jsonl
from codeweaver_eval.metrics import ratio
from codeweaver_eval.retrieval_names import NameUse, is_hit, merge_uses, snippet_uses

Search = Callable[[str, int], list[SearchResult]]
Progress = Callable[[int, int], None]
Part = Literal["all", "even", "odd"]
STDLIB_PACKAGE = "python"


@dataclass(frozen=True)
class RetrievalQuestion:
    question_id: int
    intent: str
    snippets: tuple[str, ...]


@dataclass(frozen=True)
class QuestionResult:
    question: RetrievalQuestion
    uses: tuple[NameUse, ...]
    in_index: bool  # some used name is documented in the index (the ceiling)
    results: tuple[tuple[str, float | None, bool], ...]  # (documented name, score, hit)
    seconds: float

    @property
    def first_hit(self) -> int | None:
        """1-based rank of the first hit, or None."""
        return next((i for i, (_, _, hit) in enumerate(self.results, 1) if hit), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question_id": self.question.question_id,
            "intent": self.question.intent,
            "snippets": list(self.question.snippets),
            "names": sorted({u.name for u in self.uses}),
            "in_index": self.in_index,
            "first_hit": self.first_hit,
            "results": [
                {"name": name, "score": score, "hit": hit} for name, score, hit in self.results
            ],
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True)
class RetrievalReport:
    k: int
    rows: int
    per_question: tuple[QuestionResult, ...]

    def to_dict(self) -> dict[str, Any]:
        items = self.per_question
        n = len(items)
        answered = [q for q in items if q.results]
        returned = sum(len(q.results) for q in items)
        hits = sum(sum(1 for _, _, hit in q.results if hit) for q in items)
        reciprocal = [1.0 / q.first_hit for q in items if q.first_hit]
        return {
            "questions": n,
            "rows": self.rows,
            "k": self.k,
            "recall_at_k": ratio(sum(1 for q in items if q.first_hit), n),
            "mrr": sum(reciprocal) / n if n else 0.0,
            "ceiling": ratio(sum(1 for q in items if q.in_index), n),
            "in_index": sum(1 for q in items if q.in_index),
            "empty_share": ratio(n - len(answered), n),
            "top1_precision": ratio(sum(1 for q in answered if q.results[0][2]), len(answered)),
            "result_precision": ratio(hits, returned),
            "results_per_question": returned / n if n else 0.0,
            "seconds_per_question": sum(q.seconds for q in items) / n if n else 0.0,
        }


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line or position, row) of a JSON array file or a JSONL file."""
    if not path.is_file():
        raise DatasetError(path, "no such file")
    with path.open("rb") as handle:
        first = handle.read(64).lstrip()
    if first.startswith(b"["):
        data = read_json_array(path, "a JSON array of objects")
        if not all(isinstance(r, dict) for r in data):
            raise DatasetError(path, "expected a JSON array of objects")
        return list(enumerate(data, 1))
    return list(read_jsonl(path))


def load_questions(
    path: str | Path,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    part: Part = "all",
) -> list[RetrievalQuestion]:
    """Questions of a CoNaLa-format file: `part` keeps even or odd `question_id`s, then
    `sample` draws that many at random (seeded), then `limit` keeps the first ones."""
    p = Path(path)
    grouped: dict[int, tuple[str, list[str]]] = {}
    for line, row in _rows(p):
        intent, snippet = row.get("intent"), row.get("snippet")
        if not isinstance(intent, str) or not isinstance(snippet, str) or not intent.strip():
            raise DatasetError(p, "needs `intent` and `snippet` text", line)
        raw_id = row.get("question_id", -line)
        if not isinstance(raw_id, int):
            raise DatasetError(p, "`question_id` must be an integer", line)
        grouped.setdefault(raw_id, (intent.strip(), []))[1].append(snippet)
    questions = [
        RetrievalQuestion(qid, intent, tuple(snippets))
        for qid, (intent, snippets) in grouped.items()
        if part == "all" or (qid % 2 == 0) == (part == "even")
    ]
    if sample is not None and sample < len(questions):
        questions = random.Random(seed).sample(questions, sample)
    return questions[:limit] if limit is not None else questions


def question_uses(question: RetrievalQuestion, known_modules: frozenset[str]) -> list[NameUse]:
    """The names all reference snippets of the question use."""
    return merge_uses(use for s in question.snippets for use in snippet_uses(s, known_modules))


def result_name(result: SearchResult) -> str:
    """The documented name behind a result: `reference` is `package:name@version`."""
    reference = result.get("reference") or ""
    return reference.partition(":")[2].rpartition("@")[0]


def evaluate_retrieval(
    questions: Sequence[RetrievalQuestion],
    search: Search,
    catalogue: Mapping[str, str],
    *,
    k: int = 5,
    rows: int | None = None,
    on_progress: Progress | None = None,
) -> RetrievalReport:
    """Run `search(intent, k)` on each question and judge its results.

    `catalogue` maps each documented function/method/class/property name of the index to
    its package (`python` for the stdlib); other results (modules, topics) are never hits.
    """
    by_leaf: dict[str, list[str]] = {}
    for name in catalogue:
        by_leaf.setdefault(name.rpartition(".")[2], []).append(name)
    known = frozenset(name.partition(".")[0] for name in catalogue)
    out: list[QuestionResult] = []
    for done, question in enumerate(questions, 1):
        uses = question_uses(question, known)

        def hit(name: str, uses: list[NameUse] = uses) -> bool:
            package = catalogue.get(name)
            return package is not None and is_hit(uses, name, package == STDLIB_PACKAGE)

        ceiling = any(hit(name) for use in uses for name in by_leaf.get(use.name, ()))
        started = time.perf_counter()
        found = search(question.intent, k)[:k]
        elapsed = time.perf_counter() - started
        judged = tuple((result_name(r), r.get("score"), hit(result_name(r))) for r in found)
        out.append(QuestionResult(question, tuple(uses), ceiling, judged, elapsed))
        if on_progress is not None:
            on_progress(done, len(questions))
    total_rows = rows if rows is not None else sum(len(q.snippets) for q in questions)
    return RetrievalReport(k, total_rows, tuple(out))
