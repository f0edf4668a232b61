"""Does a claim restate a sentence of its source, or restate it with something changed?

Words are compared after what does not change meaning is set aside: Markdown, code
spans, links, punctuation, case, contractions ("doesn't" is "does not") and how numbers
are written ("three" is 3, "v3.8.0" is "version 3.8"). The claim is aligned with each
source sentence; a claim that the alignment covers is a restatement, and an otherwise
faithful restatement in which a negation was added or dropped, a number or version
changed, or a name swapped for another is a contradiction. A negation moved with its
clause, or left out with a phrase of its own ("(not multiplied)"), is neither.

`changed_negation` finds a negation added or dropped in a claim reworded past the
alignment; `best_excerpt` gives the model judge the source sentences nearest a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise
from typing import TYPE_CHECKING

from codeweaver.agent.answering.facts import (
    NUMBER_WORDS,
    SOLID,
    STOP,
    Token,
    content_words,
    matching_sentences,
    plain_version,
    stem,
    tokens,
)
from codeweaver.agent.text import sentences
from codeweaver.words import STOPWORDS, stemmed_words
from codeweaver.words.lexicon import RESTATEMENT_NEGATIONS
from codeweaver.words.markers import CITATION

if TYPE_CHECKING:
    from codeweaver.agent.state import SearchResult

RESTATED = 0.8  # share of a claim's words aligned with one source sentence: a restatement
MIN_ALIGNED = 4  # fewer aligned words than this prove nothing either way
MIN_STRETCH = 8  # aligned words that make a restatement even inside a longer claim
MAX_LEAD_IN = 3  # words before the restated part that only introduce it ("In short,")
# No bracket in a link's text, no parenthesis in its target: each try stops at the next
# `[` or `(` rather than running on from every one of a long unclosed run.
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"https?://\S+")
_TOKEN = re.compile(r"\d+(?:\.\d+)+|[a-z0-9_]+")
_CONTRACTIONS = (
    (re.compile(r"\bcan[’']t\b|\bcannot\b"), "can not"),
    (re.compile(r"\bwon[’']t\b"), "will not"),
    (re.compile(r"\bshan[’']t\b"), "shall not"),
    (re.compile(r"(\w)n[’']t\b"), r"\1 not"),
)
_CODE_SPAN = re.compile(r"`([^`]+)`")
_VERSION_MARK = re.compile(r"\bv(?=\d)")  # v2, v1.3.3
# Code names outside code spans: dotted, snake_case or camelCase names, and calls. A
# dotted name may start inside a word: as in `query_shapes._CODE_TERM`, never right after
# a letter, and with its first name bounded, or each letter of a long word would rescan
# the rest of it.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z_])[A-Za-z_]\w{0,79}(?:\.[A-Za-z_]\w*)+|\b[a-z]+[A-Z]\w*|\b\w+_\w+"
    r"|\b[A-Za-z_]\w*(?=\()|\b[A-Z][a-z0-9]+[A-Z]\w*|\b[A-Z]{2,}[a-z]\w*[A-Z]\w*"
)  # the last two: DataFrame, IMovieProps
MAX_CHANGED = 3  # words on either side of a change that can still be one change
# Words that go with a negation without adding to what it negates.
_FUNCTION_WORDS = STOPWORDS | RESTATEMENT_NEGATIONS | {"longer", "ever", "at", "all"}
# What a negation's opposite may put in its place: "never" for "always", "no" for "a".
_FLIP_WORDS = frozenset(
    "always a an any some sometimes ever still longer at all do does did".split()
)


def _same_form(token: str) -> str:
    """A number as written any way: "three" is 3, version 3.8.0 is 3.8."""
    if token[:1].isdigit():
        return plain_version(token)
    return NUMBER_WORDS.get(token, token)


def words(text: str) -> list[str]:
    """The words of `text` as compared: no citation, Markdown, link, case or contraction;
    numbers as digits and versions without trailing zeros ("v2" is "version 2")."""
    text = _URL.sub(" ", _LINK.sub(r"\1", CITATION.sub(" ", text)))
    text = _VERSION_MARK.sub("version ", text.replace("\\_", "_").lower())
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    found = (_same_form(token.strip("_")) for token in _TOKEN.findall(text))
    return [token for token in found if token]


def names(text: str) -> set[str]:
    """The words of `text` that belong to code names (`open()`, `os.path`, `max_len`)."""
    spans = _CODE_SPAN.findall(text)
    named = [m.group(0) for m in _IDENTIFIER.finditer(_CODE_SPAN.sub(" ", text))]
    return set(words(" ".join(spans + named)))


def _is_number(word: str) -> bool:
    return word[:1].isdigit()


@dataclass(frozen=True)
class Alignment:
    """How a claim lines up with one source sentence."""

    sentence: str
    coverage: float  # share of the claim's words (lead-in aside) aligned with the sentence
    aligned: int  # how many words that is
    conflict: str | None = None  # what an otherwise faithful restatement changed
    region: float = 0.0  # the same share within the stretch from first to last aligned word

    @property
    def restates(self) -> bool:
        return self.conflict is None and self.aligned >= MIN_ALIGNED and (self.coverage >= RESTATED)

    @property
    def contradicts(self) -> bool:
        """A faithful restatement but for a change; or, in a claim that joined another
        sentence to it (a missing full stop), a long faithful stretch with the change."""
        if self.conflict is None or self.aligned < MIN_ALIGNED:
            return False
        return self.coverage >= RESTATED or (
            self.aligned >= MIN_STRETCH and self.region >= RESTATED
        )


def _quoted(tokens: list[str]) -> str:
    return " ".join(tokens)


def _flips(claim: list[str], source: list[str], at_edge: bool) -> bool:
    """Whether two stretches differ by a negation alone: "does [not] work", "[no longer]
    provides". A negation with a word of its own left out or added ("(not multiplied)")
    is another phrase; so is one beside the restated part, unless in place of its opposite
    ("never"/"always", "no"/"a"): there the claim's lead-in meets the source's previous
    sentence ("As …" against "… are not on. …")."""
    if not (claim and source):  # the source's own words beyond the restated part: no flip
        return not (at_edge and source) and all(w in _FUNCTION_WORDS for w in claim or source)
    return not at_edge or (set(claim) ^ set(source)) - RESTATEMENT_NEGATIONS <= _FLIP_WORDS


def _moved_negation(mine: list[list[str]], theirs: list[list[str]]) -> bool:
    """Whether a negation left unaligned on both sides came with its clause, moved: "If it
    is not, do X." as "Do X if it is not." (not "X is [not] Y (… not Z)")."""
    negated = [
        (set(claim) - RESTATEMENT_NEGATIONS, set(source) - RESTATEMENT_NEGATIONS)
        for claim in mine
        if RESTATEMENT_NEGATIONS & set(claim)
        for source in theirs
        if RESTATEMENT_NEGATIONS & set(source)
    ]
    return any(said and (said <= cited or cited <= said) for said, cited in negated)


def _conflict(
    claim: list[str],
    source: list[str],
    claim_names: set[str],
    source_names: set[str],
    negations_moved: bool = False,
    at_edge: bool = False,
    sentence: frozenset[str] = frozenset(),
) -> str | None:
    """What one short differing stretch changes: a negation, a number, or a name; else
    None. A long stretch is the claim saying something else, not changing one thing."""
    if len(claim) > MAX_CHANGED or len(source) > MAX_CHANGED or "".join(claim) == "".join(source):
        return None  # (the same letters spaced otherwise: "`0x20B0`1" for "0x20B01")
    negations = (
        sum(w in RESTATEMENT_NEGATIONS for w in claim),
        sum(w in RESTATEMENT_NEGATIONS for w in source),
    )
    if negations[0] != negations[1] and not negations_moved and _flips(claim, source, at_edge):
        added = negations[0] > negations[1]
        word = next(w for w in (claim if added else source) if w in RESTATEMENT_NEGATIONS)
        return f"it {'adds' if added else 'drops'} '{word}': the cited source says the opposite"
    numbers = [w for w in claim if _is_number(w)], [w for w in source if _is_number(w)]
    # A number the sentence holds elsewhere was moved with its clause, not changed.
    moved = set(numbers[0]) <= sentence
    if numbers[0] and numbers[1] and set(numbers[0]) != set(numbers[1]) and not moved:
        what = "version" if any("." in n for n in numbers[0] + numbers[1]) else "number"
        said, cited = _quoted(numbers[0]), _quoted(numbers[1])
        return f"it says {what} {said} where the cited source says {cited}"
    swapped = (
        claim
        and source
        # A name for a name: a name in place of prose ("associated with" for the source's
        # "attribute ssh -G …", words of its code) is another way of saying, not a swap.
        and set(claim) & claim_names
        and set(source) & source_names
        and not set(claim) & set(source)
        and not set(claim) & claim_names <= sentence
    )
    if swapped:
        return f"it says '{_quoted(claim)}' where the cited source says '{_quoted(source)}'"
    return None


def align(claim: str, sentence: str, given: str = "") -> Alignment:
    """Align `claim` with one source `sentence`.

    Numbers and names the asker gave (`given`, the question) may differ from the
    source's without contradicting it: the answer applies the source to the asker's case.
    """
    mine, theirs = words(claim), words(sentence)
    matcher = SequenceMatcher(None, mine, theirs, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    if not blocks:
        return Alignment(sentence, 0.0, 0)
    start, end = blocks[0].a, blocks[-1].a + blocks[-1].size
    asked = set(words(given))
    mine_names, their_names = names(claim) - asked, names(sentence)
    # A few words before the restated part only introduce it ("In short,"), unless they
    # hold what a source must back: a number or a name ("On Python 3.12, …").
    opening = set(mine[:start])
    plain = not opening & (mine_names | RESTATEMENT_NEGATIONS) and not any(map(_is_number, opening))
    lead_in = start if start <= MAX_LEAD_IN and plain else 0
    aligned = sum(b.size for b in blocks)
    opcodes = matcher.get_opcodes()
    moved = _moved_negation(
        [mine[i1:i2] for tag, i1, i2, _, _ in opcodes if tag != "equal"],
        [theirs[j1:j2] for tag, _, _, j1, j2 in opcodes if tag != "equal"],
    )
    conflicts: list[tuple[str, int]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        part = [w for w in mine[i1:i2] if w not in asked or w in RESTATEMENT_NEGATIONS]
        inside = start <= i1 and i2 <= end
        # Outside the restated part only a bare negation changes it ("…, this is not").
        # At either end, a word in place of the source's (a name swapped, "… does").
        edge = (i1 == end and i2 == len(mine)) or (i1 == 0 and i2 == start)
        if tag == "equal" or not (inside or edge or (part and set(part) <= RESTATEMENT_NEGATIONS)):
            continue
        compared = theirs[j1:j2] if inside or (edge and tag == "replace") else []
        found = _conflict(
            part,
            compared,
            mine_names,
            their_names,
            negations_moved=moved,
            at_edge=edge and not inside,
            sentence=frozenset(theirs),
        )
        if tag == "delete" and i1 == end == len(mine) and theirs[j1] in RESTATEMENT_NEGATIONS:
            found = _conflict([], theirs[j1 : j1 + 1], mine_names, their_names)  # "… does."
        if found:
            conflicts.append((found, i2 - i1))
    # One change in a faithful restatement contradicts it; several make another claim.
    conflict, changed = conflicts[0] if len(conflicts) == 1 else (None, 0)
    total = len(mine) - lead_in - changed
    coverage = min(1.0, aligned / total) if total > 0 else 0.0
    region = min(1.0, aligned / max(1, end - start - changed))
    return Alignment(sentence, coverage, aligned, conflict, region)


def best_alignment(claim: str, source: str, given: str = "") -> Alignment | None:
    """The restatement of `claim` in `source` if there is one, else the closest
    contradiction, else None. Single sentences are tried first: a claim joining two
    sentences is rarer, and a pair can hide a change ("does" matching a later "does")."""
    mine = words(claim)
    if len(mine) >= MIN_ALIGNED and f" {' '.join(mine)} " in f" {' '.join(words(source))} ":
        # Word for word in the source, however its sentences split (a list, a quote): the
        # claim is its own source sentence.
        return Alignment(claim, 1.0, len(mine))
    found = sentences(source)
    for group in (found, [f"{a} {b}" for a, b in pairwise(found)]):
        contradiction: Alignment | None = None
        for unit in group:
            aligned = align(claim, unit, given)
            if aligned.restates:
                return aligned
            if aligned.contradicts and (
                contradiction is None or aligned.coverage > contradiction.coverage
            ):
                contradiction = aligned
        if contradiction is not None:
            return contradiction
    return None


# Words that stay beside a negation they go with: "no longer provides" is "provides".
_COMPANIONS = frozenset({"longer", "even"})


def _beside(found: tuple[Token, ...], at: int) -> tuple[str, str] | None:
    """The words right before and after a negation (its companions aside), if both are
    words of its clause and one says more than "can be": a verb or a name."""
    after = at + 1
    while after < len(found) and found[after].text in _COMPANIONS:
        after += 1
    if at == 0 or after >= len(found) or STOP in (found[at - 1].kind, found[after].kind):
        return None
    if {found[at - 1].text, found[after].text} <= STOPWORDS:
        return None
    return stem(found[at - 1]), stem(found[after])


def _pairs(found: tuple[Token, ...]) -> set[tuple[str, str]]:
    return {(stem(a), stem(b)) for a, b in pairwise(found) if STOP not in (a.kind, b.kind)}


def changed_negation(claim: str, sources: list[str]) -> str | None:
    """A negation added or dropped between two words that the source sentence the claim
    restates, reworded, holds side by side: "is [not] in", "does [not] work".

    The sequence alignment finds it in a claim close to its sentence word for word; this
    finds it in one that rewords the rest. As many negations on both sides is no change.
    """
    mine = tokens(claim)
    matches = matching_sentences(content_words(mine), sources)
    if not matches or not matches[0].close or matches[0].shared < SOLID:
        return None
    theirs = matches[0].unit.tokens
    negated = [i for i, t in enumerate(mine) if t.text in RESTATEMENT_NEGATIONS]
    negated_there = [j for j, t in enumerate(theirs) if t.text in RESTATEMENT_NEGATIONS]
    if len(negated) > len(negated_there):
        plain = _pairs(theirs)
        for i in negated:
            if _beside(mine, i) in plain:
                return f"it adds '{mine[i].text}': the cited source says the opposite"
    elif len(negated) < len(negated_there):
        plain = _pairs(mine)
        for j in negated_there:
            if _beside(theirs, j) in plain:
                return f"it drops '{theirs[j].text}': the cited source says the opposite"
    return None


def best_excerpt(claim: str, source: SearchResult, limit: int = 2) -> str:
    """The sentences of a source that share most words with the claim."""
    found = stemmed_words(claim)
    ranked = sorted(
        sentences(source.get("snippet", "")),
        key=lambda s: len(found & stemmed_words(s)),
        reverse=True,
    )
    return " ".join(ranked[:limit])[:600]
