"""Deterministic reading of a message before any model sees it.

The too-many guard (SPEC §2) forces `too_many` on 3+ question marks or 3+ question
candidates, whatever a model would say; it also recognises the obvious single question,
so the common case costs no model call. Code blocks never count: a pasted traceback or
snippet is context, not questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codeweaver.agent.state import PlanCase, QuestionType
from codeweaver.agent.text import refers_back, subject_terms

_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_NUMBERED = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•·]|[①-⑳]|Q\d*[:.)])\s+", re.IGNORECASE)
_QUESTION_MARK = re.compile(r"[?？]")
_LEADING_JOINER = re.compile(r"^(?:and also|and|also|plus|그리고|또한|또)[\s,]+", re.IGNORECASE)
_SEPARATOR = re.compile(r"\s*(?:;|\s/\s|\s\|\s)\s*")
_QUESTION_START = re.compile(
    r"^(how|what|why|when|where|which|who|whom|whose|can|could|is|are|does|do|did|should|"
    r"would|will|may|explain|tell me|show me)\b",
    re.IGNORECASE,
)
_KO_QUESTION_END = re.compile(
    r"(까|나요|가요|뭐야|뭐예요|뭔가요|어때|할래|해줘|알려줘|인가)\s*[.!]?$"
)
# Words that often join two questions inside one sentence: leave those to the model.
_JOINERS = re.compile(
    r"\b(and also|and how|and what|and why|also|as well as|plus)\b|그리고|또한|그리고요|하고\s",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GuardDecision:
    """What the rules alone can tell; `case` is None when a model must decide."""

    case: PlanCase | None
    candidates: list[str]
    question_marks: int
    reason: str


def strip_code(text: str) -> str:
    """The message without fenced or inline code."""
    return _INLINE_CODE.sub(" ", _FENCED.sub("\n", text))


def _looks_like_question(segment: str, numbered: bool) -> bool:
    segment = segment.strip()
    if len(segment) < 2:
        return False
    return (
        numbered
        or bool(_QUESTION_MARK.search(segment))
        or bool(_QUESTION_START.match(segment))
        or bool(_KO_QUESTION_END.search(segment))
    )


def _split_on_question_marks(line: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _QUESTION_MARK.finditer(line):
        piece = line[start : match.end()].strip()
        if piece.strip("?？ "):
            parts.append(piece)
        start = match.end()
    tail = line[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def question_candidates(text: str) -> list[str]:
    """Segments of the message that each look like a question of their own."""
    candidates: list[str] = []
    for raw_line in strip_code(text).splitlines():
        if not raw_line.strip():
            continue
        numbered = bool(_NUMBERED.match(raw_line))
        line = _NUMBERED.sub("", raw_line, count=1).strip()
        for chunk in _SEPARATOR.split(line):
            for piece in _split_on_question_marks(chunk):
                stripped = _LEADING_JOINER.sub("", piece)
                if stripped != piece:  # "and what is X?" → "What is X?"
                    stripped = stripped[:1].upper() + stripped[1:]
                if _looks_like_question(stripped, numbered):
                    candidates.append(stripped)
    return candidates


def guard(text: str) -> GuardDecision:
    """Apply the deterministic rules to a message."""
    prose = strip_code(text)
    marks = len(_QUESTION_MARK.findall(prose))
    candidates = question_candidates(text)
    if marks >= 3:
        return GuardDecision("too_many", candidates, marks, f"{marks} question marks")
    if len(candidates) >= 3:
        return GuardDecision(
            "too_many", candidates, marks, f"{len(candidates)} question candidates"
        )
    if len(candidates) <= 1 and marks <= 1 and not _JOINERS.search(prose):
        return GuardDecision("single_topic", candidates, marks, "one question")
    return GuardDecision(None, candidates, marks, "needs the model")


_PERSONAL = re.compile(
    r"\b(my|mine|our|we|i'm|i am|i've|i have)\b|내\s|제\s|저의|나의|우리|제가|내가", re.IGNORECASE
)
_FOLLOW_UP_START = re.compile(
    r"^\s*(what about|how about|and |also |then |so |why not|그럼|그러면|그건|그거|또|근데)",
    re.IGNORECASE,
)


def followup_type(question: str, previous_question: str | None) -> QuestionType:
    """How a question relates to the conversation, from its words alone.

    Small models call nearly everything a clarification, so this is decided by rules: a
    question that refers back ("show me an example", "is it thread-safe?", "그럼 …") or
    names nothing of its own follows up the previous answer; one that shares a subject
    with the previous question is independent; anything else starts a new topic.
    """
    if previous_question is None:
        return "new_topic"
    own = subject_terms(question)
    if not own or _FOLLOW_UP_START.match(question) or refers_back(question):
        return "clarification"
    if own & subject_terms(previous_question):
        return "independent"
    return "new_topic"


def depends_on_context(question: str) -> bool:
    """Whether the answer depends on the asker's own code or setup (then never cached)."""
    return bool(_PERSONAL.search(strip_code(question))) or "```" in question
