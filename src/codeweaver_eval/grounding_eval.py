"""`codeweaver eval grounding`: how well the grounding check treats labelled answers.

A case is a question, its numbered sources and an answer, optionally labelled
`supported` (true/false, or 1/0), with the `kind` of falsehood and the `false_claim`
sentence an unsupported answer holds. The check runs as in the graph. An answer is
flagged when a cited claim contradicts its source (it would be rewritten, then warned
about); an unsupported answer is caught when it is flagged or when its false claim
loses its citation. Reported: flags on supported answers (the false alarms users see),
removed citations on them, unsupported answers caught, flagged and with the false
citation removed; the same by kind (`by_kind`: unsupported answers caught, per kind of
falsehood; `supported_by_kind`: supported answers touched, i.e. flagged or with a
citation removed, per kind); the share of answers whose citations all name a source,
before and after the check; model calls and seconds per answer.

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

from codeweaver.agent.answering.grounding import GroundingReport as Check
from codeweaver.agent.answering.grounding import check_grounding
from codeweaver.agent.answering.restatement import words
from codeweaver.agent.text import sentences
from codeweaver.words.markers import CITATION, cited_numbers
from codeweaver_eval.datasets import DatasetError, read_jsonl
from codeweaver_eval.metrics import ratio

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
    false_claim: str = ""  # the sentence that makes an unsupported answer false


@dataclass
class GroundingReport:
    cases: int = 0
    supported: int = 0
    unsupported: int = 0
    flagged_supported: int = 0  # false alarms: a contradiction found in a supported answer
    removed_supported: int = 0  # supported answers that lost a citation
    flagged_unsupported: int = 0  # a contradiction found: rewrite, then warning
    removed_unsupported: int = 0  # the false claim's citation removed
    caught_unsupported: int = 0  # either of the two
    unlabelled_flagged: int = 0
    citations_valid_before: int = 0
    citations_valid: int = 0  # after the check removed what no source supports
    model_calls: int = 0
    seconds: float = 0.0
    # Per kind of unsupported answer: cases, caught, flagged, removed (the false citation).
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    # Per kind of supported answer: cases, touched, flagged, removed (any citation).
    supported_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        flagged = self.flagged_unsupported + self.flagged_supported
        return {
            "cases": self.cases,
            "precision": ratio(self.flagged_unsupported, flagged) if flagged else None,
            "recall": ratio(self.caught_unsupported, self.unsupported)
            if self.unsupported
            else None,
            "flag_rate_unsupported": ratio(self.flagged_unsupported, self.unsupported),
            "removed_rate_unsupported": ratio(self.removed_unsupported, self.unsupported),
            "flag_rate_supported": ratio(self.flagged_supported, self.supported),
            "removed_rate_supported": ratio(self.removed_supported, self.supported),
            "citations_valid_before": ratio(self.citations_valid_before, self.cases),
            "citations_valid": ratio(self.citations_valid, self.cases),
            "model_calls_per_answer": ratio(self.model_calls, self.cases),
            "seconds_per_answer": round(self.seconds / self.cases, 3) if self.cases else 0.0,
            "unlabelled_flagged": self.unlabelled_flagged,
            "by_kind": {
                kind: {**counts, "rate": ratio(counts["caught"], counts["cases"])}
                for kind, counts in sorted(self.by_kind.items())
            },
            "supported_by_kind": {
                kind: {**counts, "rate": ratio(counts["touched"], counts["cases"])}
                for kind, counts in sorted(self.supported_by_kind.items())
            },
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
        kind, false_claim = str(row.get("kind") or ""), str(row.get("false_claim") or "")
        cases.append(GroundingCase(line, question, sources, answer, supported, kind, false_claim))
        if limit is not None and len(cases) >= limit:
            break
    return cases


def _all_valid(answer: str, sources: int) -> bool:
    return all(1 <= n <= sources for n in cited_numbers(answer))


def false_citation_removed(check: Check, false_claim: str) -> bool:
    """Whether the check removed the citation of the case's false claim (of any claim,
    when the case does not say which is false)."""
    if not false_claim:
        return bool(check.removed)
    wanted = set(words(false_claim))
    return any(len(wanted & set(words(v.claim.plain))) >= 0.8 * len(wanted) for v in check.removed)


def _count(
    table: dict[str, dict[str, int]], kind: str, either: str, flagged: bool, removed: bool
) -> None:
    """One more case of `kind`: flagged, with a citation removed, or `either` of the two."""
    counts = table.setdefault(kind, {"cases": 0, either: 0, "flagged": 0, "removed": 0})
    counts["cases"] += 1
    counts[either] += int(flagged or removed)
    counts["flagged"] += int(flagged)
    counts["removed"] += int(removed)


async def evaluate_grounding(
    cases: list[GroundingCase], llm: BaseChatModel | None, on_progress: Progress | None = None
) -> GroundingReport:
    report = GroundingReport()
    for done, case in enumerate(cases, 1):
        started = time.perf_counter()
        check = await check_grounding(llm, case.question, case.answer, case.sources)
        cleaned = check.cleaned(case.answer, len(case.sources))
        report.seconds += time.perf_counter() - started
        report.cases += 1
        report.model_calls += int(check.asked_model)
        report.citations_valid_before += int(_all_valid(case.answer, len(case.sources)))
        report.citations_valid += int(_all_valid(cleaned, len(case.sources)))
        flagged = not check.passed
        removed = False
        if case.supported is None:
            report.unlabelled_flagged += int(flagged)
        elif case.supported:
            removed = bool(check.removed or check.unknown_citations)
            report.supported += 1
            report.flagged_supported += int(flagged)
            report.removed_supported += int(removed)
            _count(report.supported_by_kind, case.kind or "supported", "touched", flagged, removed)
        else:
            removed = false_citation_removed(check, case.false_claim)
            report.unsupported += 1
            report.flagged_unsupported += int(flagged)
            report.removed_unsupported += int(removed)
            report.caught_unsupported += int(flagged or removed)
            _count(report.by_kind, case.kind or "unsupported", "caught", flagged, removed)
        wrong = flagged if case.supported else not (flagged or removed)
        if case.supported is not None and wrong and len(report.examples) < 10:
            report.examples.append(
                {"line": case.line, "kind": case.kind, "supported": case.supported,
                 "flagged": flagged, "unsupported": check.to_dict()["unsupported"]}
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


def cited_claim(claim: str) -> str:
    """`claim` as inserted: its own markers dropped, citing source 1."""
    return CITATION.sub("", claim).strip().rstrip(".") + " [1]."


def insert_claim(answer: str, claim: str) -> str:
    """`claim`, citing source 1, after the answer's first paragraph."""
    claim = cited_claim(claim)
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
        claim = false_claim(accepted, other, index)
        altered = insert_claim(written, claim)
        kind = "negated source sentence" if index % 2 else "foreign sentence"
        pair = [
            {"question": question, "sources": sources, "answer": written,
             "supported": True, "kind": "model answer"},
            {"question": question, "sources": sources, "answer": altered,
             "supported": False, "kind": kind, "false_claim": cited_claim(claim)},
        ]  # fmt: skip
        for case in pair:
            built.append(case)
            if on_case:
                on_case(case)
        if on_progress:
            on_progress(index + 1, len(rows))
    return built
