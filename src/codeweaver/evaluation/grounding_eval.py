"""`codeweaver eval grounding`: how well the grounding check flags unsupported answers.

A case is a question, its numbered sources and an answer, optionally labelled
`supported` (true/false, or 1/0). The check runs as in the graph; an answer counts as
flagged when it has an unsupported cited claim or a citation naming no source. Reported:
precision and recall at flagging unsupported answers, the flag rate on each label, the
share of answers whose citations all exist, model calls and seconds per answer.

`build_cases` makes such a set from StackEval: the model answers each question with the
accepted answer as its only source (unmodified, labelled supported), then a false claim
citing that source is inserted (labelled unsupported): alternately a sentence from
another question's accepted answer, and a source sentence with its meaning negated.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codeweaver.agent.citations import CITATION
from codeweaver.agent.grounding import check_grounding
from codeweaver.agent.text import sentences
from codeweaver.evaluation.datasets import DatasetError, read_jsonl
from codeweaver.evaluation.metrics import ratio

if TYPE_CHECKING:
    from pathlib import Path

    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.state import SearchResult

Progress = Callable[[int, int], None]
_FENCED = re.compile(r"```.*?```", re.DOTALL)
MAX_CHARS = 1500  # of a question or a source: bounds the prompt on a small local model
_NEGATABLE = re.compile(r"\b(is|are|can|will|does|do|should|returns?|works?)\b")


@dataclass(frozen=True)
class GroundingCase:
    line: int
    question: str
    sources: list[SearchResult]
    answer: str
    supported: bool | None
    kind: str = ""


@dataclass
class GroundingReport:
    cases: int = 0
    flagged_unsupported: int = 0  # true positives: unsupported and flagged
    missed_unsupported: int = 0
    flagged_supported: int = 0  # false alarms
    passed_supported: int = 0
    unlabelled_flagged: int = 0
    citations_valid: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        unsupported = self.flagged_unsupported + self.missed_unsupported
        supported = self.flagged_supported + self.passed_supported
        flagged = self.flagged_unsupported + self.flagged_supported
        return {
            "cases": self.cases,
            "precision": ratio(self.flagged_unsupported, flagged) if flagged else None,
            "recall": ratio(self.flagged_unsupported, unsupported) if unsupported else None,
            "flag_rate_unsupported": ratio(self.flagged_unsupported, unsupported),
            "flag_rate_supported": ratio(self.flagged_supported, supported),
            "citations_valid": ratio(self.citations_valid, self.cases),
            "model_calls_per_answer": ratio(self.model_calls, self.cases),
            "seconds_per_answer": round(self.seconds / self.cases, 3) if self.cases else 0.0,
            "unlabelled_flagged": self.unlabelled_flagged,
            "examples": self.examples,
        }


def _sources(line: int, path: Path | str, raw: object) -> list[SearchResult]:
    if not isinstance(raw, list) or not raw:
        raise DatasetError(path, "`sources` must be a non-empty list", line)
    found: list[SearchResult] = []
    for item in raw:
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise DatasetError(path, "each source must be text or an object", line)
        text = str(item.get("text") or item.get("snippet") or "")
        found.append(
            {
                "title": str(item.get("title") or f"source {len(found) + 1}"),
                "url": str(item.get("url") or ""),
                "snippet": text,
                "source": "eval",
                "score": None,
            }
        )
    return found


def load_cases(path: Path | str, *, limit: int | None = None) -> list[GroundingCase]:
    cases: list[GroundingCase] = []
    for line, row in read_jsonl(path):
        question, answer = row.get("question"), row.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str) or not answer.strip():
            raise DatasetError(path, "needs `question` and `answer` text", line)
        label = row.get("supported", row.get("label"))
        if label is not None and str(label).lower() not in {"0", "1", "true", "false"}:
            raise DatasetError(path, f"`supported` must be true/false or 1/0, got {label!r}", line)
        supported = None if label is None else str(label).lower() in {"1", "true"}
        sources = _sources(line, path, row.get("sources"))
        cases.append(GroundingCase(line, question, sources, answer, supported, row.get("kind", "")))
        if limit is not None and len(cases) >= limit:
            break
    return cases


async def evaluate_grounding(
    cases: list[GroundingCase], llm: BaseChatModel | None, on_progress: Progress | None = None
) -> GroundingReport:
    report = GroundingReport()
    for done, case in enumerate(cases, 1):
        started = time.perf_counter()
        check = await check_grounding(llm, case.question, case.answer, case.sources)
        report.seconds += time.perf_counter() - started
        report.cases += 1
        report.model_calls += int(check.asked_model)
        report.citations_valid += int(not check.unknown_citations)
        flagged = bool(check.unsupported or check.unknown_citations)
        if case.supported is None:
            report.unlabelled_flagged += int(flagged)
        elif case.supported:
            report.flagged_supported += int(flagged)
            report.passed_supported += int(not flagged)
        else:
            report.flagged_unsupported += int(flagged)
            report.missed_unsupported += int(not flagged)
        if case.supported is not None and flagged == case.supported and len(report.examples) < 10:
            report.examples.append(
                {"line": case.line, "kind": case.kind, "supported": case.supported,
                 "flagged": flagged, "unsupported": [v.claim.plain for v in check.unsupported]}
            )  # fmt: skip
        if on_progress:
            on_progress(done, len(cases))
    return report


def negate(sentence: str) -> str | None:
    """The sentence with its first verb negated ("returns" → "never returns"), if any."""
    match = _NEGATABLE.search(sentence)
    if match is None:
        return None
    verb = match.group(1)
    replacement = (
        f"{verb} not" if verb in {"is", "are", "can", "will", "should"} else f"never {verb}"
    )
    return sentence[: match.start()] + replacement + sentence[match.end() :]


def _prose(text: str) -> list[str]:
    return [s for s in sentences(_FENCED.sub(" ", text)) if 40 <= len(s) <= 240]


def false_claim(source: str, other: str, index: int) -> str:
    """A claim the source does not support: a negated source sentence, or another
    question's answer sentence (alternating by `index`)."""
    own = _prose(source)
    if index % 2 and own:
        for candidate in own:
            negated = negate(candidate)
            if negated:
                return negated
    foreign = _prose(other) or [f"This behaviour was removed in version {index + 7}.0."]
    return foreign[index % len(foreign)]


def insert_claim(answer: str, claim: str) -> str:
    """`claim`, citing source 1, after the answer's first paragraph."""
    claim = CITATION.sub("", claim).strip().rstrip(".") + " [1]."
    head, sep, rest = answer.partition("\n\n")
    return f"{head} {claim}{sep}{rest}" if sep else f"{answer.rstrip()} {claim}"


async def build_cases(
    rows: list[dict[str, Any]],
    answer: Callable[[str, list[SearchResult]], Awaitable[str]],
    on_progress: Progress | None = None,
    on_case: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Two cases per StackEval row: the model's answer, and the same with a false claim.

    `on_case` receives each case as soon as it is made (to write it before the next).
    """
    built: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        question = str(row["question"]).strip()[:MAX_CHARS]
        accepted = str(row["answer"]).strip()[:MAX_CHARS]
        source: SearchResult = {
            "title": "Accepted answer",
            "url": "",
            "snippet": accepted,
            "source": "stackeval",
            "score": None,
        }
        written = await answer(question, [source])
        other = str(rows[(index + 1) % len(rows)]["answer"])
        sources = [{"title": "Accepted answer", "text": accepted}]
        altered = insert_claim(written, false_claim(accepted, other, index))
        kind = "negated source sentence" if index % 2 else "foreign sentence"
        pair = [
            {"question": question, "sources": sources, "answer": written,
             "supported": True, "kind": "model answer"},
            {"question": question, "sources": sources, "answer": altered,
             "supported": False, "kind": kind},
        ]  # fmt: skip
        for case in pair:
            built.append(case)
            if on_case:
                on_case(case)
        if on_progress:
            on_progress(index + 1, len(rows))
    return built
