"""Does an answer stand on its sources? Claims, their citations, and a grade.

The answer is split into claims: sentences outside code that cite a source (an uncited
sentence is general knowledge, not a claim). Each claim gets one of three outcomes:

- supported: it restates a sentence of its cited source (Markdown, code spans, links,
  punctuation, case and a short lead-in set aside), or its subject words, numbers and
  versions are all found there; such a claim is never flagged;
- citation removed: its source does not support it, but nothing shows it wrong; the
  sentence stays, without the citation;
- contradiction: a source sentence restated with a negation added or dropped, a number
  or a version changed, or a name swapped; only this sends the answer back for a rewrite.

Words settle most claims at no cost. What they cannot settle passes, or with the model
judge goes to the model in one batched call, which also grades whether the answer
addresses the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from codeweaver.agent.answering.api_citations import cited_by_name
from codeweaver.agent.answering.citations import (
    drop_unknown_citations,
    remove_citations,
    strip_citations,
)
from codeweaver.agent.answering.code_citations import introduces_code
from codeweaver.agent.answering.facts import changed_fact, unheld
from codeweaver.agent.answering.restatement import (
    best_alignment,
    best_excerpt,
    changed_negation,
)
from codeweaver.agent.text import sentences
from codeweaver.agent.user_text import say
from codeweaver.words import NEGATION, STOPWORDS, stemmed_words, subject_words
from codeweaver.words.markers import CITATION, cited_numbers

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.state import SearchResult

SUPPORTED = 0.6  # share of a claim's subject words found in its sources: supported
UNSUPPORTED = 0.15  # below this share: unsupported without asking the model
MIN_CLAIM_WORDS = 3
MIN_ANSWER_LETTERS = 3
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.])")
# Indentation within the line only (`[^\S\n]`): a leading `\s*` would rescan every blank
# line below each line start of a run of them, quadratic in an answer of newlines.
_BULLET = re.compile(r"^[^\S\n]*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_LEAD_IN = re.compile(r"(?<=\w):\s+(?=[^\s\[])")
_HEADING = re.compile(r"^[^\S\n]*#+\s.*$", re.MULTILINE)  # indented as `_BULLET`
# A citation closes its sentence even when the next one starts in lower case.
_CITED_END = re.compile(r"(?<=\]\.)\s+(?=\S)")
# Auxiliaries and pronouns ("was", "other") say nothing about a claim's subject.
_COMMON = frozenset(subject_words(" ".join(STOPWORDS)))


def claim_words(text: str) -> set[str]:
    """The stemmed words that carry what a sentence is about."""
    return subject_words(text) - _COMMON


# Words of sentences that say where the answer came from, or introduce what follows.
_ATTRIBUTION = frozenset(
    subject_words("source sources documentation docs cited derived according reference")
)
_FRAMING = _ATTRIBUTION | subject_words(
    """here s example examples code snippet following follow below above step steps
    answer information info directly cite official based taken provided shown show see look"""
)


@dataclass(frozen=True)
class Claim:
    index: int
    text: str  # as written, citation markers included
    citations: tuple[int, ...]
    lead_in: bool = False  # before a colon, cited after it: only a contradiction counts

    @property
    def plain(self) -> str:
        text = " ".join(strip_citations(self.text).split())
        return re.sub(r"(?<!\s)\s+([.,;:!?])", r"\1", text)  # from a run's first space


SUPPORTED_CLAIM, REMOVED, CONTRADICTION = "supported", "citation removed", "contradiction"


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    supported: bool
    support: float
    reason: str
    contradicts: bool = False  # an unsupported claim that its source says the opposite of

    @property
    def outcome(self) -> str:
        if self.supported:
            return SUPPORTED_CLAIM
        return CONTRADICTION if self.contradicts else REMOVED


@dataclass
class GroundingReport:
    verdicts: list[ClaimVerdict] = field(default_factory=list)
    unknown_citations: list[int] = field(default_factory=list)
    answers_question: bool = True
    grade_reason: str = ""
    asked_model: bool = False
    model_problem: str | None = None

    @property
    def unsupported(self) -> list[ClaimVerdict]:
        """Every claim its source does not support: removed citations and contradictions."""
        return [v for v in self.verdicts if not v.supported]

    @property
    def contradictions(self) -> list[ClaimVerdict]:
        return [v for v in self.verdicts if v.outcome == CONTRADICTION]

    @property
    def removed(self) -> list[ClaimVerdict]:
        """Claims whose citations are removed: unsupported, but not shown wrong."""
        return [v for v in self.verdicts if v.outcome == REMOVED]

    @property
    def passed(self) -> bool:
        """Nothing to rewrite: no cited claim contradicts its source. A grade of "off the
        question" is reported, never a reason to rewrite: a small grader says it of
        answers that are fine, and each rewrite costs a whole answer."""
        return not self.contradictions

    def rank(self) -> tuple[int, int, int, int]:
        """Lower is better: for keeping the best of several attempts."""
        return (
            len(self.contradictions),
            0 if self.answers_question else 1,
            len(self.removed) + len(self.unknown_citations),
            -len(self.verdicts),
        )

    def cleaned(self, answer: str, sources: int) -> str:
        """`answer` without the citations its sources do not support; sentences stay."""
        removals = [(v.claim.text, v.claim.citations) for v in self.removed]
        return drop_unknown_citations(remove_citations(answer, removals), sources)

    def feedback(self) -> str:
        """What the next attempt must fix, for the answer prompt."""
        lines = [f'- "{v.claim.plain}": {v.reason}' for v in self.contradictions]
        if not self.answers_question:
            lines.append(f"- the answer does not address the question ({self.grade_reason})")
        return "\n".join(lines)

    def summary(self) -> str:
        checked = len(self.verdicts)
        parts = [f"{checked - len(self.unsupported)} of {checked} cited claims supported"]
        if self.contradictions:
            parts.append(f"{len(self.contradictions)} contradict their source")
        if self.removed:
            parts.append(f"citation removed from {len(self.removed)} unsupported")
        if self.unknown_citations:
            numbers = ", ".join(f"[{n}]" for n in self.unknown_citations)
            parts.append(f"removed {numbers}: no such source")
        if not self.answers_question:
            parts.append(f"off the question ({self.grade_reason})")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "claims": len(self.verdicts),
            "contradictions": len(self.contradictions),
            "citations_removed": len(self.removed),
            "unsupported": [
                {
                    "claim": v.claim.plain,
                    "citations": list(v.claim.citations),
                    "outcome": v.outcome,
                    "reason": v.reason,
                }
                for v in self.unsupported
            ],
            "unknown_citations": self.unknown_citations,
            "answers_question": self.answers_question,
            "asked_model": self.asked_model,
        }


def split_claims(answer: str) -> list[Claim]:
    """Sentences of prose (code blocks and headings set aside) with their citations."""
    prose = _HEADING.sub("\n\n", _FENCED.sub("\n\n", answer))
    prose = _BULLET.sub("\n\n", prose)
    claims: list[Claim] = []
    for sentence in sentences(prose):
        for cited_part in _CITED_END.split(sentence):
            # A lead-in ("follow these steps:") is not part of the claim after it.
            parts = [" ".join(part.split()) for part in _LEAD_IN.split(cited_part)]
            for n, text in enumerate(parts):
                plain = strip_citations(text)
                cited = tuple(dict.fromkeys(cited_numbers(text)))
                later = tuple(dict.fromkeys(cited_numbers(" ".join(parts[n + 1 :]))))
                if len(claim_words(plain)) < MIN_CLAIM_WORDS and not cited:
                    continue
                if not cited and later and not _frames(f"{plain}:"):
                    # A lead-in that states something stands under the citation after it.
                    claims.append(Claim(len(claims) + 1, text, later, lead_in=True))
                elif not _frames(plain):
                    claims.append(Claim(len(claims) + 1, text, cited))
    return claims


def _frames(plain: str) -> bool:
    """Whether a sentence only introduces what follows or says where the answer came from.

    "Here's a simple code example:" and "This answer is from the cited source." state
    nothing about the subject, so there is nothing in them a source could support.
    """
    words = claim_words(plain)
    introduces = plain.rstrip(" .").endswith(":") or bool(words & _ATTRIBUTION)
    return introduces and len(words - _FRAMING) <= 1


def _source_text(source: SearchResult) -> str:
    return " ".join([source.get("title", ""), source.get("snippet", ""), source.get("summary", "")])


def _negated(text: str) -> bool:
    return bool(stemmed_words(text) & NEGATION)


def lexical_verdict(
    claim: Claim, sources: Sequence[SearchResult], question: str = ""
) -> ClaimVerdict | None:
    """The claim's outcome by words alone, or None when only a reader can tell."""
    texts = [_source_text(sources[n - 1]) for n in claim.citations if 1 <= n <= len(sources)]
    if not texts:
        return ClaimVerdict(claim, False, 0.0, "cites no listed source")
    # A fact changed passes the restatement check below (one word in five may differ).
    # As written: `plain` joins ". env" into a name ("generate.env") when it closes a gap.
    changed = changed_fact(strip_citations(claim.text), texts, question)
    if changed is not None:
        return ClaimVerdict(claim, False, 0.0, changed.reason, True)
    # A restated source sentence is supported, whatever else the claim's words suggest.
    contradiction = None
    for text in texts:
        found = best_alignment(claim.plain, text, question)
        if found is not None and found.restates:
            return ClaimVerdict(claim, True, found.coverage, "it restates the cited source")
        if found is not None and contradiction is None:
            contradiction = found
    if contradiction is not None and contradiction.conflict:
        return ClaimVerdict(claim, False, contradiction.coverage, contradiction.conflict, True)
    if negation := changed_negation(strip_citations(claim.text), texts):
        return ClaimVerdict(claim, False, 0.0, negation, True)
    body = " ".join(texts)
    # A number the asker gave (a version, a port) may be repeated without a source.
    given = set(_NUMBER.findall(body)) | set(_NUMBER.findall(question))
    missing_numbers = unheld(set(_NUMBER.findall(claim.plain)) - given, [*texts, question])
    if missing_numbers:
        found_numbers = ", ".join(sorted(missing_numbers))
        return ClaimVerdict(claim, False, 0.0, f"{found_numbers} not in the cited source")
    words = claim_words(claim.plain)
    if len(words) < MIN_CLAIM_WORDS:
        return None  # too little to compare (a lead-in, a Korean sentence): a reader's call
    support = len(words & stemmed_words(body)) / len(words)
    if support < UNSUPPORTED:
        return ClaimVerdict(claim, False, support, "its subject is not in the cited source")
    if support >= SUPPORTED and not _negated(claim.plain):
        return ClaimVerdict(claim, True, support, "its subject is in the cited source")
    return None


def _named_api_verdict(claim: Claim, sources: Sequence[SearchResult]) -> ClaimVerdict | None:
    """A citation placed because the answer's code uses the API the page documents says
    where to read about that API, not that the page states the sentence: it stands."""
    cited = [sources[n - 1] for n in claim.citations if 1 <= n <= len(sources)]
    if cited and len(cited) == len(claim.citations) and all(map(cited_by_name, cited)):
        return ClaimVerdict(claim, True, 1.0, "its code uses the API the cited page documents")
    return None


def _copied_code_verdict(
    claim: Claim, sources: Sequence[SearchResult], answer: str
) -> ClaimVerdict | None:
    """The line that introduces a code block copied from the cited sources says where the
    code comes from, not that the source states it: its citation stands."""
    # Only an introduction ("… like this:"): a statement before the code is a claim like
    # any other. (A heading is no claim: its citation is not checked at all.)
    if not claim.plain.endswith(":"):
        return None
    cited = [sources[n - 1] for n in claim.citations if 1 <= n <= len(sources)]
    if (
        cited
        and len(cited) == len(claim.citations)
        and all(introduces_code(answer, claim.text.rstrip(), s) for s in cited)
    ):
        return ClaimVerdict(claim, True, 1.0, "it introduces code copied from the cited source")
    return None


class JudgeOut(BaseModel):
    unsupported: list[int] = Field(default_factory=list)
    answers_question: bool = True


def _grade_by_words(answer: str) -> tuple[bool, str]:
    """Words can only tell an answer that says nothing; the model grades the rest."""
    letters = sum(c.isalpha() for c in CITATION.sub(" ", answer))
    if letters < MIN_ANSWER_LETTERS:
        return False, "the answer says almost nothing"
    return True, ""


async def check_grounding(
    llm: BaseChatModel | None,
    question: str,
    answer: str,
    sources: Sequence[SearchResult],
    by_words: bool = True,
) -> GroundingReport:
    """Check `answer` against its numbered `sources`; `llm` decides what words cannot.

    `by_words=False` (an answer in another language than its English sources) leaves
    every cited claim to the model: shared words mean nothing across languages.
    """
    from codeweaver.agent import prompts
    from codeweaver.llm.structured import ainvoke_structured

    report = GroundingReport()
    report.unknown_citations = sorted(
        {n for n in cited_numbers(answer) if not 1 <= n <= len(sources)}
    )
    undecided: list[Claim] = []
    for claim in split_claims(answer):
        if not claim.citations:
            continue  # general knowledge, by the answer prompt's rule
        verdict = _named_api_verdict(claim, sources)
        if verdict is None and by_words:
            verdict = lexical_verdict(claim, sources, question)
        if verdict is None or not (verdict.supported or verdict.contradicts):
            # Introducing copied code vouches for the citation, never against a contradiction.
            verdict = _copied_code_verdict(claim, sources, answer) or verdict
        if claim.lead_in and (verdict is None or not verdict.contradicts):
            continue
        if verdict is None:
            undecided.append(claim)
        else:
            report.verdicts.append(verdict)
    report.answers_question, report.grade_reason = _grade_by_words(answer)
    if undecided and llm is not None:
        items = [
            (
                c.index,
                c.plain,
                " ".join(
                    f"[{n}] {best_excerpt(c.plain, sources[n - 1])}"
                    for n in c.citations
                    if 1 <= n <= len(sources)
                ),
            )
            for c in undecided
        ]
        result = await ainvoke_structured(
            llm, prompts.judge_messages(question, items), JudgeOut, JudgeOut()
        )
        report.asked_model = True
        report.model_problem = result.fallback_reason
        flagged = set(result.value.unsupported)
        for claim in undecided:
            bad = claim.index in flagged
            reason = "the model found no support in the cited source" if bad else "checked"
            report.verdicts.append(ClaimVerdict(claim, not bad, -1.0, reason))
        if result.fallback_reason is None and not result.value.answers_question:
            report.answers_question, report.grade_reason = False, "judged off the question"
    else:
        for claim in undecided:  # no reader available: give the benefit of the doubt
            report.verdicts.append(ClaimVerdict(claim, True, -1.0, "not verifiable by words"))
    report.verdicts.sort(key=lambda v: v.claim.index)
    return report


def warning(report: GroundingReport, language: str) -> str:
    """The visible note under an answer that still contradicts its sources after the
    rewrite (or that may not address the question)."""
    items = "\n".join(f"> - {v.claim.plain} ({v.reason})" for v in report.contradictions[:5])
    head = say("contradicts_sources", language) if items else ""
    off = "" if report.answers_question else say("may_not_answer", language)
    return "\n".join(filter(None, [head, items, off]))
