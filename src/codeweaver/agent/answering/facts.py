"""Did a cited claim change a fact of the source sentence it restates?

A restatement may reword, reorder and reformat its source, but it keeps the source's
facts: numbers, versions and code names (identifiers, functions, flags, options,
commands). A fact of the claim standing where its best-matching source sentence holds
another of the same kind, when no sentence matching the claim as well holds it, was
changed: the claim contradicts its source. A fact with no such counterpart is at most
unsupported, for the rest of the check to decide.

The place must be surer the likelier the fact is there by right. Found nowhere in the
sources, one agreeing neighbour in the most alike sentence will do. Held elsewhere in
the source (a name of the same answer), the words on both sides must agree, or a claim
joining two sentences would read as a swap. Given by the asker, it may apply the source
to the asker's case: only a close restatement of a sentence that uses it says otherwise.

Facts compare however written: "three" is 3, "3.8.0" is 3.8, `open()` is open, `--flag`
is flag, case aside. A claim without facts, or word for word in its source, costs a few
lookups.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import takewhile

from codeweaver.agent.text import sentences
from codeweaver.words import STOPWORDS, TECHNOLOGIES, stem_for_cache_check
from codeweaver.words.markers import CITATION

NUMBER, VERSION, NAME, WORD, STOP = "number", "version", "name", "word", "stop"
FACTS = (NUMBER, VERSION, NAME)
_FAMILY = {VERSION: NUMBER}  # "Python 3" may become "Python 3.9"
MIN_SHARED = 2  # content words a claim and a source sentence share, at the least
SOLID = 3  # from this many on, the alignment need not be confirmed on both sides
MIN_OVERLAP = 0.5  # and the share of the shorter one's content words they are
RESTATED = 0.7  # share of the claim's content words in one sentence: a close restatement
WINDOW = 2  # how far from a fact its neighbours are looked for
# How sure the place must be (see `_place`).
BOTH_SIDES, ONE_SIDE_AT_AN_END, ONE_SIDE = 4, 2, 1
_COUNTS = "zero one two three four five six seven eight nine ten eleven twelve".split()
NUMBER_WORDS = {word: str(value) for value, word in enumerate(_COUNTS)}  # "three" is 3
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()\s]*\)")
_URL = re.compile(r"https?://\S+")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# One token: the end of a clause or an aside, C++11, a flag (-r, --save-dev), a version
# (3.8.0), a number, a path (app/models), a dotted or scoped name (os.path.join,
# Lang::get), a call (open(…)), a word.
# Every repetition is bounded, so no text makes a try rescan far.
_PIECE = re.compile(
    r"(?P<stop>[.!?;:](?!\S)|(?<!\S)\(|\)(?![^\s.,;:!?]))"
    r"|(?P<cpp>[Cc]\+\+\d\d)(?!\w)"
    r"|(?P<flag>(?<![\w-])--?[A-Za-z][\w-]{0,40})"
    r"|(?P<version>\d{1,6}(?:\.\d{1,6})+)"
    r"|(?P<number>\d{1,12})"
    r"|(?P<path>[\w.-]{0,60}(?:[\\/][\w.-]{1,60}){1,12})"
    r"|(?P<dotted>[A-Za-z_$][\w$]{0,60}(?:(?:\.|::|->|#)[A-Za-z_$][\w$]{0,60})+)"
    r"|(?P<call>[A-Za-z_$][\w$]{0,60}(?=\())"
    r"|(?P<word>[A-Za-z_$][\w$]{0,60}(?:['’][a-z]{1,2}(?![a-z]))?)"
)
_SCOPE = re.compile(r"\.|::|->|#")
_PATH = re.compile(r"[\\/]")
_GLUED = re.compile(r"(?<![a-z])([a-z]+)(\d+)")  # python3, es6, v2, ipv6: a word with a version
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
# Words after which a number is a version ("Java 8", "version 2").
_VERSIONED = TECHNOLOGIES | frozenset(
    """version versions v release api level sdk jdk es ecmascript ios macos xcode windows
    net dotnet laravel symfony angular vue node gcc clang cmake gradle java jre mysql
    postgresql php perl python rails django spring swift kotlin qt webpack""".split()
)
_CONTRACTED = {"can't": "can not", "won't": "will not", "shan't": "shall not"}


@dataclass(frozen=True)
class Token:
    text: str  # as compared: lower case, versions without trailing ".0", digits for words
    kind: str  # NUMBER, VERSION, NAME, WORD, or STOP for the end of a sentence or clause


@dataclass(frozen=True)
class Change:
    """A fact of the claim in the place of a different one of its source sentence."""

    said: str
    cited: str
    kind: str
    sentence: str

    @property
    def reason(self) -> str:
        if self.kind == NAME:
            return f"it says '{self.said}' where the cited source says '{self.cited}'"
        return f"it says {self.kind} {self.said} where the cited source says {self.cited}"


def plain_version(text: str) -> str:
    """A version without trailing zeros: 3.8.0 is 3.8, 2.0 is 2."""
    parts = text.split(".")
    while len(parts) > 1 and parts[-1].strip("0") == "":
        parts.pop()
    return ".".join(parts)


def _word_tokens(word: str, in_code: bool) -> list[Token]:
    lowered = word.lower().replace("’", "'")
    if lowered in _CONTRACTED or lowered.endswith("n't"):
        verb = _CONTRACTED.get(lowered, lowered[:-3] + " not").split()[0]
        return [Token(verb, WORD), Token("not", WORD)]
    lowered = lowered.split("'")[0]  # it's, you're: the pronoun is what compares
    if lowered == "cannot":
        return [Token("can", WORD), Token("not", WORD)]
    if lowered in NUMBER_WORDS and not in_code:
        return [Token(NUMBER_WORDS[lowered], NUMBER)]
    glued = _GLUED.fullmatch(lowered)
    if glued and not in_code:
        return [Token(glued.group(1), WORD), Token(glued.group(2), VERSION)]
    code_like = "_" in word or "$" in word or _INNER_CAPITAL.search(word) is not None
    return [Token(lowered, NAME if in_code or code_like else WORD)]


def _scan(text: str, in_code: bool) -> list[Token]:
    found: list[Token] = []
    for match in _PIECE.finditer(text):
        kind, piece = match.lastgroup or "word", match.group(0)
        if kind == "stop":
            if not in_code:  # a parenthesis in code is a call's, not an aside's
                found.append(Token(".", STOP))
        elif kind == "cpp":
            found += [Token("c++", WORD), Token(piece[3:], VERSION)]
        elif kind in ("flag", "call", "path"):
            found.append(Token(piece.lower().rstrip(".").lstrip("\\/"), NAME))
        elif kind == "version":
            found.append(Token(plain_version(piece), VERSION))
        elif kind == "number":
            found.append(Token(str(int(piece)), NUMBER))
        elif kind == "dotted" and all(len(p) > 1 for p in _SCOPE.split(piece)):
            found.append(Token(piece.lower(), NAME))  # e.g. and i.e. are no names
        else:
            found += [t for w in _SCOPE.split(piece) if w for t in _word_tokens(w, in_code)]
    return found


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[Token, ...]:
    """The tokens of a sentence, facts marked: a code span's words are all names."""
    text = _URL.sub(" ", _LINK.sub(r"\1", CITATION.sub(" ", text))).replace("\\_", "_")
    found: list[Token] = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        found += _scan(text[position : span.start()], in_code=False)
        found += _scan(span.group(1), in_code=True)
        position = span.end()
    return tuple(found + _scan(text[position:], in_code=False))


# Snowball is most of the check's cost, and a source's words recur in every claim.
_stem_word = lru_cache(maxsize=16384)(stem_for_cache_check)


def stem(token: Token) -> str:
    return _stem_word(token.text) if token.kind == WORD else token.text


def content_words(found: tuple[Token, ...]) -> frozenset[str]:
    return frozenset(stem(t) for t in found if t.kind == WORD and t.text not in STOPWORDS)


def _bare(name: str) -> str:
    return name.lstrip("-$@").strip("'\"")


def _held(found: tuple[Token, ...] | list[Token]) -> Counter[str]:
    """How often each fact occurs; a name also holds its bare form (`--flag`: flag), a
    scoped name's parts (`Lang::get`: get) and a path's (nest.js/common: nest.js),
    head and tail too: a code span may cut one ("`github.com`/mongodb/driver")."""
    held = Counter(t.text for t in found if t.kind in FACTS)
    for token in found:
        if token.kind != NAME:
            continue
        parts = {_bare(token.text), *_SCOPE.split(token.text)[1:]}
        if _PATH.search(token.text):
            parts.update([*_PATH.split(token.text), *_PATH.split(token.text, maxsplit=1)])
        held.update(part for part in parts if part and part != token.text)
    return held


@lru_cache(maxsize=256)
def _known(text: str) -> frozenset[str]:
    """Every fact of a whole text, its code too, read both as prose and as code
    (`python3` in code is python 3 in prose)."""
    whole = _FENCED.sub(lambda m: m.group(0).replace("`", " "), text)
    plain = _CODE_SPAN.sub(r" \1 ", whole)
    found = [*tokens(whole), *_scan(plain, in_code=False), *_scan(plain, in_code=True)]
    return frozenset(t.text for t in found) | frozenset(_held(found))


def unheld(numbers: set[str], texts: list[str]) -> set[str]:
    """Those of `numbers` that none of `texts` holds written another way either ("four",
    "v2", 3.8 for 3.8.0)."""
    if not numbers:
        return numbers  # the usual case: nothing to read the texts for
    known = frozenset().union(*(_known(text) for text in texts))
    return {number for number in numbers if plain_version(number) not in known}


@dataclass(frozen=True)
class _Unit:
    """A prose sentence of a source: what a claim may restate."""

    sentence: str
    tokens: tuple[Token, ...]
    content: frozenset[str]
    held: Counter[str]


@lru_cache(maxsize=256)
def _units(text: str) -> tuple[_Unit, ...]:
    found = [(s, tokens(s)) for s in sentences(_FENCED.sub("\n\n", text))]
    return tuple(_Unit(s, t, content_words(t), _held(t)) for s, t in found)


def _neighbours(found: tuple[Token, ...], at: int) -> tuple[list[str], list[str]]:
    """The words before (nearest first) and after a token, within its clause."""
    sides = reversed(found[max(0, at - WINDOW) : at]), found[at + 1 : at + 1 + WINDOW]
    before, after = ([stem(t) for t in takewhile(_in_clause, side)] for side in sides)
    return before, after


def _in_clause(token: Token) -> bool:
    return token.kind != STOP


def _side(mine: list[str], theirs: list[str]) -> int:
    """How well the words on one side of two facts agree: 2 when the nearest are the
    same or both clauses end there, 1 when they meet within the window, else 0."""
    if not mine and not theirs:
        return 2
    if mine and theirs and mine[0] == theirs[0]:
        return 2
    return int(bool(set(mine) & set(theirs)))


def _place(mine: tuple[Token, ...], i: int, theirs: tuple[Token, ...], j: int) -> int:
    """How surely fact `i` of the claim stands in the place of fact `j` of the sentence:
    BOTH_SIDES (or 3) when the words on both sides agree; ONE_SIDE_AT_AN_END when the
    nearest on one side is the same content word and the other side ends in one of them
    (a clause moved: "… `X` if …" for "If …, … `X`."); ONE_SIDE when only that word
    agrees; else 0."""
    (my_left, my_right), (their_left, their_right) = _neighbours(mine, i), _neighbours(theirs, j)
    left, right = _side(my_left, their_left), _side(my_right, their_right)
    if left and right and left + right >= 3:
        return left + right
    same = [
        w
        for w in (my_left[:1] if left == 2 else []) + (my_right[:1] if right == 2 else [])
        if w not in STOPWORDS and not w.isdigit()
    ]
    if not same:
        return 0
    ends = not (my_left and their_left) or not (my_right and their_right)
    return ONE_SIDE_AT_AN_END if ends else ONE_SIDE


def _kind(mine: tuple[Token, ...], i: int, theirs: tuple[Token, ...], j: int) -> str:
    """A number is a version when either side writes it as one or after what it numbers."""
    if mine[i].kind == NAME:
        return NAME
    named = {mine[i - 1].text if i else "", theirs[j - 1].text if j else ""} & _VERSIONED
    return VERSION if VERSION in (mine[i].kind, theirs[j].kind) or named else NUMBER


def _run_together(mine: tuple[Token, ...], i: int, theirs: tuple[Token, ...], j: int) -> bool:
    """Whether the two are the same letters spaced otherwise: "`Service`is" read as
    Serviceis, against "Service is"."""
    after_mine = mine[i + 1].text if i + 1 < len(mine) else ""
    after_theirs = theirs[j + 1].text if j + 1 < len(theirs) else ""
    return mine[i].text == theirs[j].text + after_theirs or theirs[j].text == (
        mine[i].text + after_mine
    )


@dataclass(frozen=True)
class Match:
    """A source sentence sharing the claim's subject, and how alike the two are."""

    unit: _Unit
    shared: int  # content words in common
    alike: float  # the Dice share of them: a short sentence is no closer for being short
    close: bool  # the claim restates the sentence, a lead-in or a clause aside


def matching_sentences(content: frozenset[str], sources: list[str]) -> list[Match]:
    """The source sentences sharing a claim's subject (its `content` words), most alike
    first."""
    found: list[Match] = []
    for unit in (u for source in sources for u in _units(source)):
        shared = len(content & unit.content)
        if shared < MIN_SHARED or shared < MIN_OVERLAP * min(len(content), len(unit.content)):
            continue
        alike = 2 * shared / (len(content) + len(unit.content))
        close = shared >= RESTATED * len(content) or (
            shared > SOLID and shared == len(unit.content)
        )
        found.append(Match(unit, shared, alike, close))
    return sorted(found, key=lambda m: -m.alike)


def _holds(match: Match, mine: tuple[Token, ...], i: int, said: Counter[str]) -> bool:
    """Whether the sentence holds fact `i` of the claim, as often, or spaced otherwise."""
    theirs = match.unit.tokens
    return match.unit.held[mine[i].text] >= said[mine[i].text] or any(
        _run_together(mine, i, theirs, j) for j in range(len(theirs))
    )


def _counterparts(
    mine: tuple[Token, ...], i: int, match: Match, said: Counter[str]
) -> list[tuple[int, int]]:
    """The facts of the sentence that could stand where fact `i` of the claim stands (of
    its kind, and missing from the claim), with how surely they do (see `_place`)."""
    theirs = match.unit.tokens
    found: list[tuple[int, int]] = []
    for j, fact in enumerate(theirs):
        if (
            fact.kind in FACTS
            and _FAMILY.get(fact.kind, fact.kind) == _FAMILY.get(mine[i].kind, mine[i].kind)
            and said[fact.text] < match.unit.held[fact.text]
            and _bare(fact.text) != _bare(mine[i].text)  # `--flag` written as `flag`
            and not _run_together(mine, i, theirs, j)
        ):
            place = _place(mine, i, theirs, j)
            # Two shared words align by chance: only both sides confirm the place.
            found.append((j, place if match.shared >= SOLID or place == BOTH_SIDES else 0))
    return found


def _adapted(said: str, cited: str, asked: frozenset[str]) -> bool:
    """Whether the claim's name differs from the source's only by names the asker gave:
    `records.sort` for `items.sort` (not `records.reverse`)."""
    mine, theirs = _SCOPE.split(said), _SCOPE.split(cited)
    if len(mine) != len(theirs):
        return said in asked
    return all(a == b or a in asked for a, b in zip(mine, theirs, strict=True))


def _verbatim(mine: tuple[Token, ...], sources: list[str]) -> bool:
    """Whether the claim is word for word in a source, however its sentences split."""
    said = " ".join(t.text for t in mine if t.kind != STOP)
    return any(
        f" {said} " in f" {' '.join(t.text for t in tokens(s) if t.kind != STOP)} " for s in sources
    )


def changed_fact(claim: str, sources: list[str], given: str = "") -> Change | None:
    """The fact of `claim` in the place of another of the same kind in a source sentence
    that matches the claim better than any holding it; else None.

    `given` is the question: a fact it holds may apply the source to the asker's case.
    """
    mine = tokens(claim)
    facts = [i for i, t in enumerate(mine) if t.kind in FACTS]
    if not facts or _verbatim(mine, sources):
        return None
    said, content = _held(mine), content_words(mine)
    matches = matching_sentences(content, sources)
    if not matches:
        return None
    known = frozenset().union(*(_known(s) for s in sources))
    asked = frozenset(_held(tokens(given)))  # the asker's names and numbers, not words
    for i in facts:
        text = mine[i].text
        holding = max((m.alike for m in matches if _holds(m, mine, i, said)), default=0.0)
        elsewhere = text in known or _bare(text) in known
        # The most alike first: the sentence the claim restates, unless one as alike holds
        # the fact.
        for match in (m for m in matches if m.alike > holding):
            for j, place in _counterparts(mine, i, match, said):
                cited = match.unit.tokens[j].text
                # The asker's fact for one the asker did not give: the answer applies the
                # source to the asker's case (`records.sort()` for `items.sort()`), unless
                # the source uses it too and the claim restates the sentence closely.
                adapted = _adapted(text, cited, asked) and cited not in asked
                if adapted and not (elsewhere and match.close):
                    continue
                # Found nowhere else, one agreeing neighbour in the most alike sentence
                # will do; held elsewhere or given by the asker, the other side must agree
                # or end.
                if elsewhere or adapted or match is not matches[0]:
                    sure = place >= ONE_SIDE_AT_AN_END
                else:
                    sure = place >= ONE_SIDE
                if sure:
                    kind = _kind(mine, i, match.unit.tokens, j)
                    return Change(text, cited, kind, match.unit.sentence)
    return None
