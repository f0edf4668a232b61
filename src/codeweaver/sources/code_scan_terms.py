"""The local code scan's query terms: phrases, error names, identifiers and their parts,
and the remaining content words of a debugging question, each weighted by its kind.

The words themselves (what an identifier is, where it splits, which words say nothing
about where to look) come from `codeweaver.words`; `code_scan` matches and ranks the terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from codeweaver.words import CODE_SEARCH_VAGUE, STOPWORDS
from codeweaver.words.patterns import (
    CODE_SEARCH_CAMEL_SPLIT,
    CODE_SEARCH_IDENTIFIER,
    CODE_SEARCH_WORD,
)

TermKind = Literal["phrase", "error", "identifier", "word", "part"]
# How much a match of each kind counts, before idf.
KIND_WEIGHTS: dict[TermKind, float] = {
    "phrase": 2.0,
    "error": 1.5,
    "identifier": 1.5,
    "word": 1.0,
    "part": 0.5,
}
MAX_TERMS = 24
MAX_PHRASE_WORDS = 16
_NOISE = STOPWORDS | CODE_SEARCH_VAGUE
_ERROR_NAME = r"[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt)"
_ERROR_MESSAGE = re.compile(rf"\b({_ERROR_NAME}):[ \t]*([^\n]+)")
# Where a quoted error message ends and the question goes on.
_MESSAGE_END = re.compile(
    r"(?<=[.?!])\s|\s[—–-]\s|\s(?:when|whenever|while|after|because|but|if)\s+"
    r"(?:i|we|my|our|the|calling|running|trying|using)\b",
    re.IGNORECASE,
)
_ERROR_ONLY = re.compile(rf"^{_ERROR_NAME}$")
_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]{2,})\"|“([^”\n]{2,})”|(?<!\w)'([^'\n]{2,})'(?!\w)")
_CODE_LIKE = re.compile(r"^[\w.]+(?:\(\))?$")


@dataclass(frozen=True)
class Term:
    """A lowercased search term. A phrase is its words joined by single spaces (matched
    across punctuation and quotes) and keeps its content words (to find candidate lines
    and to match in part when placeholders were filled in)."""

    text: str
    kind: TermKind
    content: tuple[str, ...] = ()
    # Other spellings of an identifier (`parse_body` for `parseBody`, and back), matched
    # as the term itself: the question may not spell a name as the code does.
    forms: tuple[str, ...] = ()

    @property
    def weight(self) -> float:
        return KIND_WEIGHTS[self.kind]

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.text, *self.forms)


def _split_identifier(name: str) -> list[str]:
    return [
        part.lower() for part in CODE_SEARCH_CAMEL_SPLIT.sub(" ", name.replace("_", " ")).split()
    ]


def _is_compound(name: str) -> bool:
    return "_" in name.strip("_") or bool(CODE_SEARCH_CAMEL_SPLIT.search(name))


def extract_terms(query: str) -> list[Term]:
    """Phrases (quoted text, error messages), error names, identifiers with their
    camelCase/snake_case parts, and the remaining content words of `query`."""
    found: dict[str, Term] = {}

    def add(term: Term) -> None:
        kept = found.get(term.text)
        if kept is None or term.weight > kept.weight:
            found[term.text] = term

    def add_phrase(text: str) -> None:
        words = tuple(CODE_SEARCH_WORD.findall(text.lower()))[:MAX_PHRASE_WORDS]
        content = tuple(w for w in words if w not in _NOISE and len(w) > 1)
        if len(words) >= 2 and content:
            add(Term(" ".join(words), "phrase", content))

    code_names: set[str] = set()
    for match in _QUOTED.finditer(query):
        inner = next(group for group in match.groups() if group is not None).strip()
        if _CODE_LIKE.match(inner):
            code_names.update(CODE_SEARCH_IDENTIFIER.findall(inner))
        else:
            add_phrase(inner)
    for match in _ERROR_MESSAGE.finditer(query):
        # The message ends with its sentence; the question usually goes on after it.
        add_phrase(_MESSAGE_END.split(match.group(2), maxsplit=1)[0])
    # Tried from a word's start only (its digits skipped): from each of its letters, the
    # search would rescan the rest of the word, quadratic in a long one.
    calls = re.finditer(r"(?<!\w)[^\W_A-Za-z]*([A-Za-z_]\w*)\s*\(", query)
    code_names.update(m.group(1) for m in calls)
    for name in CODE_SEARCH_IDENTIFIER.findall(query):
        lowered = name.lower()
        if _ERROR_ONLY.match(name):
            add(Term(lowered, "error"))
        elif _is_compound(name) or name in code_names:
            parts = _split_identifier(name)
            if lowered not in _NOISE and len(lowered) > 1:
                forms = {"_".join(parts), "".join(parts)} - {lowered} if len(parts) > 1 else set()
                add(Term(lowered, "identifier", forms=tuple(sorted(forms))))
            for part in parts:
                if part != lowered and part not in _NOISE and len(part) > 1:
                    add(Term(part, "part"))
        elif lowered not in _NOISE and len(lowered) > 1 and not lowered.isdigit():
            add(Term(lowered, "word"))
    ranked = sorted(found.values(), key=lambda term: -term.weight)
    return ranked[:MAX_TERMS]
