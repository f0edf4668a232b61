"""Deterministic reading of a message before any model sees it.

The too-many guard declines, whatever a model would say, a message holding three or more
*independent* questions: candidates on their own lines, numbered, split by separators or
chained by "?", whose subjects differ ("JWT? CORS? Docker?"). Several "?" about one
subject are one question, and so is a pasted post (a first line, then a body of prose or
code): its later "?" ask about the same problem. Code, quoted lines and URLs never count.
The rules also settle the obvious single question and the plain two-question message, so
the common cases cost no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codeweaver.words import refers_back, subject_terms

if TYPE_CHECKING:
    from codeweaver.agent.state import PlanCase, QuestionType

_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•·]|[①-⑳]|Q\d*[:.)])\s+", re.IGNORECASE)
_QUESTION_MARK = re.compile(r"[?？]")
_SENTENCE_BREAK = re.compile(r"(?<=[.!。！])\s+(?=[A-Z가-힣])")
_LEADING_JOINER = re.compile(
    r"^(?:and another thing|one more thing|and also|oh and|and|also|plus|아 그리고|그리고|또한|또)"
    r"[\s,:]+",
    re.IGNORECASE,
)
# " / " is left out: in prose it is mostly division ("x = float(i) / (n-1)").
# A match may not start inside a run of whitespace: from there the leading `\s*` would
# rescan the rest of the run at every position (quadratic on a padded question), and it
# never finds a separator the run's first position did not.
_SEPARATOR = re.compile(r"(?:(?<!\s)|(?=\S))\s*(?:;|\s\|\s)\s*")
# "Or …?" offers another reading of the question before it, never a new one.
_ALTERNATIVE = re.compile(r"^or\b", re.IGNORECASE)
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
_WORDS = re.compile(r"\w+")
# Words of a question that asks for help without naming a subject ("What did I do wrong
# here?", "Any ideas?"): such a question continues the one before it.
_GENERIC = frozenset(
    """wrong missing help idea suggestion anyone anybody someone somebody here yeah ok okay
    thank understand sure know little well don right correct correctly possible better fix
    solve solution happen happening going mean else thing""".split()
)
# A body sentence of this many words that asks nothing makes the message a post.
_PROSE_WORDS = 3


@dataclass(frozen=True)
class GuardDecision:
    """What the rules alone can tell; `case` is None when a model must decide."""

    case: PlanCase | None
    candidates: list[str]
    question_marks: int
    reason: str


@dataclass(frozen=True)
class _Piece:
    """A sentence of the message's prose and where it stands."""

    text: str
    asks: bool  # phrased as a question
    listed: bool  # on a numbered or bulleted line
    separated: bool  # a list item or a part split off by ";" or " | "
    line: int
    alone: bool  # a list item, or the only sentence of its line

    @property
    def candidate(self) -> bool:
        return self.asks or self.listed


def strip_code(text: str) -> str:
    """The message without fenced or inline code."""
    return _INLINE_CODE.sub(" ", _FENCED.sub("\n", text))


def _prose(text: str) -> str:
    """What the asker wrote: no code blocks, quoted lines or URLs. Inline code stays, as
    it often names the subject (`asyncio.gather`), but without its "?" (`block_given?`)."""
    blocks_out = _FENCED.sub("\n", text)
    inline = _INLINE_CODE.sub(lambda m: m.group(0).strip("`").replace("?", " "), blocks_out)
    return _URL.sub(" ", _QUOTED_LINE.sub("", inline))


def _asks(segment: str) -> bool:
    if _QUESTION_MARK.search(segment) or _KO_QUESTION_END.search(segment):
        return True
    # "When I run it, it fails." opens like a question but states something.
    return bool(_QUESTION_START.match(segment)) and segment[-1] not in ".!:"


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


def _without_joiner(piece: str) -> str:
    stripped = _LEADING_JOINER.sub("", piece)
    if stripped != piece:  # "and what is X?" → "What is X?"
        stripped = stripped[:1].upper() + stripped[1:]
    return stripped


def _sentences(line: str) -> list[tuple[bool, str]]:
    """(split by a separator, sentence) pairs of one unlisted line. A question keeps the
    statements that lead up to it ("It fails on Windows. Why?")."""
    chunks = _SEPARATOR.split(line)
    found: list[tuple[bool, str]] = []
    for chunk in chunks:
        for part in _split_on_question_marks(chunk):
            asked = part[-1] in "?？"
            for sentence in [part] if asked else _SENTENCE_BREAK.split(part):
                found.append((len(chunks) > 1, sentence))
    return found


def _pieces(text: str) -> list[_Piece]:
    pieces: list[_Piece] = []
    lines = [line for line in _prose(text).splitlines() if line.strip()]
    for index, raw_line in enumerate(lines):
        if _NUMBERED.match(raw_line):  # one list item, one piece, whatever its "?"
            item = _without_joiner(_NUMBERED.sub("", raw_line, count=1).strip())
            if len(item) >= 2:
                asks = any(_asks(part) for part in _split_on_question_marks(item))
                pieces.append(_Piece(item, asks, True, True, index, True))
            continue
        found = _sentences(raw_line.strip())
        for split, sentence in found:
            stripped = _without_joiner(sentence.strip())
            if len(stripped) >= 2:
                alone = len(found) == 1
                pieces.append(_Piece(stripped, _asks(stripped), False, split, index, alone))
    return pieces


def question_candidates(text: str) -> list[str]:
    """Segments of the message that each look like a question of their own."""
    return [piece.text for piece in _pieces(text) if piece.candidate]


def _is_post(text: str, pieces: list[_Piece]) -> bool:
    """A first line followed by a body that states something or shows code before its
    last question: a pasted Stack Overflow-style post, one problem however many "?" it
    holds. (A closing line "Thanks in advance for your help." makes no post.)"""
    asking = [piece.line for piece in pieces if piece.candidate]
    last = max(asking or [piece.line for piece in pieces] or [0])
    if any(
        0 < piece.line <= last
        and not piece.candidate
        and len(_WORDS.findall(piece.text)) >= _PROSE_WORDS
        for piece in pieces
    ):
        return True
    fence = text.find("```")
    return fence > 0 and bool(text[:fence].strip())


def _own_terms(text: str) -> set[str]:
    return subject_terms(text) - _GENERIC


def _names_subject(text: str) -> bool:
    """False for a question of help words only ("Yeah?", "What did I do wrong here?")."""
    terms = subject_terms(text)
    return not terms or bool(terms - _GENERIC)


def _independent(piece: _Piece, seen: set[str], *, post: bool) -> bool:
    """Whether a candidate starts a subject of its own, given every word before it."""
    if refers_back(piece.text) or _ALTERNATIVE.match(piece.text):
        return False
    if piece.text.startswith("(") and ")" not in piece.text and not piece.alone:
        # "Reloading `.zshrc`? (`source` VS `exec`?)": a question asked inside brackets
        # glosses the one before it on its line (a StackEval title was split in two);
        # "(Django) how to …?" only tags its own question.
        return False
    terms = _own_terms(piece.text)
    if terms & seen:
        return False
    if post:
        # In a post only a question on a line (or list item) of its own counts, and only
        # with a subject of its own: "?" inside a body paragraph continue the post.
        return piece.alone and piece.asks and bool(terms)
    return bool(terms) or piece.separated


def independent_questions(text: str) -> tuple[list[str], bool]:
    """The message's questions with different subjects, and whether it is a post.

    A candidate that continues an earlier subject ("How do I stop it?") is merged into
    that question, and so is one that follows a question naming no subject ("Yeah? Then
    why …?"). In a post the first question stands for the post, and its body's "?" only
    count as new questions on lines of their own, with a subject of their own.
    """
    pieces = _pieces(text)
    post = _is_post(text, pieces)
    groups: list[list[str]] = []
    named = False  # whether the last question names more than help words
    seen: set[str] = set()
    for piece in pieces:
        if piece.candidate:
            fresh = _independent(piece, seen, post=post) and not (post and piece.line == 0)
            if not groups or (fresh and (named or post)):
                groups.append([piece.text])
                named = _names_subject(piece.text)
            elif not post:
                groups[-1].append(piece.text)
                named = named or _names_subject(piece.text)
        seen |= _own_terms(piece.text)
    return [" ".join(group) for group in groups], post


def guard(text: str) -> GuardDecision:
    """Apply the deterministic rules to a message."""
    prose = _prose(text)
    marks = len(_QUESTION_MARK.findall(prose))
    candidates = question_candidates(text)
    questions, post = independent_questions(text)
    if len(questions) >= 3:
        reason = f"{len(questions)} independent questions"
        return GuardDecision("too_many", questions, marks, reason)
    if post:  # a title and its body are one question, never split
        return GuardDecision("single_topic", questions[:1], marks, "one post")
    if len(questions) == 2:
        return GuardDecision(None, questions, marks, "two independent questions")
    if len(candidates) <= 1 and _JOINERS.search(prose):
        return GuardDecision(None, candidates, marks, "needs the model")
    return GuardDecision("single_topic", questions or candidates, marks, "one question")


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
