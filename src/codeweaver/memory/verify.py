"""Does a cached question ask the same thing as a new one? Decided by rules, after cosine.

Embeddings put "convert a string to an int" and "convert an int to a string" at cosine
0.996, so a candidate found by similarity must also pass checks of what embeddings blur:

- direction: the same terms on the two sides of "to" / "into" / "from" / "than", swapped;
- versions and numbers: "python 2" is not "python 3";
- technologies: two different languages or libraries named;
- negation: "without", "not", "except" on one side only;
- qualifiers: a distinctive word one question adds ("utc", "binary", "descending"),
  after placeholders (backticked or quoted names and values) are set aside and a few
  synonyms are merged (dict/dictionary, int/integer, df/dataframe, …).

Every check rejects; none accepts on its own. The reasons are returned for the steps.
The words compared (stemmed, synonyms merged, filler set aside) come from
`codeweaver.words.compare`, shared with the grounding check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codeweaver.words import NEGATION, TECHNOLOGIES, compare_terms, content_terms
from codeweaver.words.patterns import PLACEHOLDER

_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
_DIRECTION = frozenset({"to", "into", "from", "than", "as"})


@dataclass(frozen=True)
class Verdict:
    same: bool
    reason: str


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.])")


def _values(text: str) -> set[str]:
    """Literal values a question names: quoted or backticked non-identifiers, and numbers."""
    found = set()
    for match in PLACEHOLDER.finditer(text):
        inner = match.group()[1:-1].strip()
        if inner and not _IDENTIFIER.match(inner):
            found.add(inner)
    found.update(_BARE_NUMBER.findall(PLACEHOLDER.sub(" ", text)))
    return found


def _pins_down(value: str) -> bool:
    """A number, a separator or an index changes the task; a sample text usually not."""
    return (
        bool(_NUMBER.match(value))
        or (len(value) <= 3 and not value.isalpha())
        or (value.startswith("[") and value.endswith("]"))
    )


def _sides(words: list[str]) -> tuple[set[str], set[str]] | None:
    """Content words before and after the first direction word ("str to int")."""
    for i, word in enumerate(words):
        if word in _DIRECTION:
            before = {w for w in content_terms(words[:i]) if not _NUMBER.match(w)}
            after = {w for w in content_terms(words[i + 1 :]) if not _NUMBER.match(w)}
            if word == "from":
                before, after = after, before
            if before and after:
                return before, after
    return None


def _reversed(one: list[str], two: list[str]) -> str | None:
    """A term that is the source in one question and the target in the other."""
    first, second = _sides(one), _sides(two)
    if first is None or second is None:
        return None
    source_became_target = first[0] & second[1] - first[1]
    target_became_source = first[1] & second[0] - first[0]
    if source_became_target and target_became_source:
        return f"{min(source_became_target)} ↔ {min(target_became_source)}"
    return None


def content_size(text: str) -> int:
    """How many distinct subject words a question has for the rules to compare."""
    return len(set(content_terms(compare_terms(text))))


def same_question(first: str, second: str) -> Verdict:
    """Whether two questions ask the same thing, as far as rules can tell."""
    one, two = compare_terms(first), compare_terms(second)
    swapped = _reversed(one, two)
    if swapped:
        return Verdict(False, f"opposite direction ({swapped})")
    values = _values(first), _values(second)
    if values[0] and values[1] and values[0] != values[1]:
        changed = ", ".join(sorted(values[0] ^ values[1]))
        return Verdict(False, f"different versions, numbers or values ({changed})")
    pinned = {v for v in values[0] ^ values[1] if _pins_down(v)}
    if pinned:
        return Verdict(False, f"one names a specific value ({', '.join(sorted(pinned))})")
    techs = set(one) & TECHNOLOGIES, set(two) & TECHNOLOGIES
    if techs[0] and techs[1] and not techs[0] & techs[1]:
        return Verdict(False, f"different technologies ({', '.join(sorted(techs[0] | techs[1]))})")
    if bool(set(one) & NEGATION) != bool(set(two) & NEGATION):
        return Verdict(False, "negated on one side only")
    extra = set(content_terms(one)) ^ set(content_terms(two))
    extra = {w for w in extra if not _NUMBER.match(w)}
    if extra:
        return Verdict(False, f"asks about different things ({', '.join(sorted(extra))})")
    return Verdict(True, "same question")
