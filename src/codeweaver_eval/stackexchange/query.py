"""What the loopback Stack Exchange API does with `q`: the site's search syntax, and BM25.

The site's search (https://stackoverflow.com/help/searching) requires every word, reads
`"a phrase"` verbatim, `[tag]` as a tag, a leading `-` as "not this word or tag", and
`name:value` operators (`title:`, `body:`, `is:question`/`is:answer`, `score:`,
`answers:`, `hasaccepted:`, `views:`; a number may be `3`, `3..`, `..3` or `1..3`).
Operators that need data the stand-in has not got (`user:`, `created:`, …) are read and
ignored, never required as words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

# The words the stand-in's imitation of the site's search drops, short because the site's
# own search keeps most words.
STACKEXCHANGE_SEARCH_STOPWORDS = frozenset(
    "a an and are as at be but by can could do does for from how i if in into is it its me "
    "my no not of on or so such that the their then there these they this to was what when "
    "where which while who why will with would you your".split()
)
_WORD = re.compile(r"[a-z0-9_]+")
_PHRASE = re.compile(r'"([^"]+)"')
_TAG = r"\[([a-z0-9.#+-]+)\]"
# `[tag]` as a whole word is the site's tag syntax; `arr[10]` in code is not.
_TAG_TERM = re.compile(rf"(?<!\S){_TAG}(?!\S)", re.IGNORECASE)
_EXCLUDED_TAG = re.compile(rf"(?<!\S)-{_TAG}(?!\S)", re.IGNORECASE)
# `-word` excludes the word, as the site's search does (a dash that starts a token).
_EXCLUDED = re.compile(r"(?<!\S)-(\S+)")
# Operators the stand-in applies, and those it reads and ignores (no data for them).
APPLIED_OPERATORS = ("title", "body", "is", "score", "answers", "hasaccepted", "views")
IGNORED_OPERATORS = (
    "user", "created", "lastactive", "closed", "duplicate", "migrated", "locked", "wiki",
    "url", "code", "inquestion", "infavorites", "hasnotice", "isaccepted", "collective",
)  # fmt: skip
OPERATORS = (*APPLIED_OPERATORS, *IGNORED_OPERATORS)
_OPERATOR = re.compile(rf"(?<!\S)({'|'.join(OPERATORS)}):(\"[^\"]*\"|\S+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+")


def words(text: str) -> list[str]:
    """Lower-case word tokens: what `q` terms and BM25 match on."""
    return _WORD.findall(text.lower())


def norm(text: str) -> str:
    """Lower case, runs of white space as one space."""
    return " ".join(text.lower().split())


def _content_words(text: str) -> list[str]:
    return list(dict.fromkeys(w for w in words(text) if w not in STACKEXCHANGE_SEARCH_STOPWORDS))


def _range(value: str) -> tuple[int | None, int | None] | None:
    """`3` → (3, None), `..3` → (None, 3), `1..3` → (1, 3); None for anything else."""
    low_text, dots, high_text = value.partition("..")
    parts = (low_text, high_text) if dots else (value, "")
    if not any(parts) or not all(_NUMBER.fullmatch(p) for p in parts if p):
        return None
    low, high = (int(p) if p else None for p in parts)
    return low, high


def _within(value: int, bounds: tuple[int | None, int | None] | None) -> bool:
    if bounds is None:
        return True
    low, high = bounds
    return (low is None or value >= low) and (high is None or value <= high)


class Searchable(Protocol):
    """What a query needs of a post."""

    @property
    def title_words(self) -> tuple[str, ...]: ...
    @property
    def vocabulary(self) -> frozenset[str]: ...
    @property
    def text(self) -> str: ...
    @property
    def body_text(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def question_score(self) -> int: ...
    @property
    def answer_count(self) -> int: ...
    @property
    def has_accepted(self) -> bool: ...
    @property
    def view_count(self) -> int: ...


@dataclass(frozen=True)
class Query:
    """A parsed `q`: required words and phrases, tags, exclusions and operators."""

    terms: tuple[str, ...]
    phrases: tuple[str, ...]
    tags: tuple[str, ...]
    excluded: tuple[str, ...] = ()
    excluded_tags: tuple[str, ...] = ()
    title_terms: tuple[str, ...] = ()
    body_terms: tuple[str, ...] = ()
    score: tuple[int | None, int | None] | None = None
    answers: tuple[int | None, int | None] | None = None
    views: tuple[int | None, int | None] | None = None
    has_accepted: bool | None = None
    answers_only: bool = False  # `is:answer`: `/search/advanced` lists questions only

    @classmethod
    def parse(cls, q: str) -> Query:
        fields: dict[str, object] = {}
        title_terms: list[str] = []
        body_terms: list[str] = []
        for name, raw in _OPERATOR.findall(q):
            name, value = name.lower(), raw.strip('"')
            if name == "title":
                title_terms += _content_words(value)
            elif name == "body":
                body_terms += _content_words(value)
            elif name == "is":
                fields["answers_only"] = value.lower() in ("answer", "a")
            elif name in ("score", "answers", "views"):
                fields[name] = _range(value)
            elif name == "hasaccepted":
                fields["has_accepted"] = value.lower() in ("yes", "true", "1")
        rest = _OPERATOR.sub(" ", q)
        phrases = tuple(norm(p) for p in _PHRASE.findall(rest) if p.strip())
        rest = _PHRASE.sub(" ", rest)
        excluded_tags = tuple(t.lower() for t in _EXCLUDED_TAG.findall(rest))
        rest = _EXCLUDED_TAG.sub(" ", rest)
        tags = tuple(t.lower() for t in _TAG_TERM.findall(rest))
        rest = _TAG_TERM.sub(" ", rest)
        excluded = tuple(dict.fromkeys(w for x in _EXCLUDED.findall(rest) for w in words(x)))
        rest = _EXCLUDED.sub(" ", rest)
        return cls(
            terms=tuple(_content_words(rest)),
            phrases=phrases,
            tags=tags,
            excluded=excluded,
            excluded_tags=excluded_tags,
            title_terms=tuple(dict.fromkeys(title_terms)),
            body_terms=tuple(dict.fromkeys(body_terms)),
            **fields,  # type: ignore[arg-type]
        )

    def matches(self, post: Searchable) -> bool:
        vocabulary = post.vocabulary
        body = set(words(post.body_text)) if self.body_terms else set()
        return (
            not self.answers_only
            and all(t in vocabulary for t in self.terms)
            and all(p in post.text for p in self.phrases)
            and all(t in post.tags for t in self.tags)
            and not any(t in vocabulary for t in self.excluded)
            and not any(t in post.tags for t in self.excluded_tags)
            and all(t in post.title_words for t in self.title_terms)
            and all(t in body for t in self.body_terms)
            and _within(post.question_score, self.score)
            and _within(post.answer_count, self.answers)
            and _within(post.view_count, self.views)
            and (self.has_accepted is None or post.has_accepted == self.has_accepted)
        )

    @property
    def ranking_terms(self) -> list[str]:
        phrase_words = [w for p in self.phrases for w in _content_words(p)]
        named = [*self.terms, *self.title_terms, *self.body_terms, *phrase_words]
        return list(dict.fromkeys(named))


def similar_terms(title: str) -> list[str]:
    """The words of a `/similar` title that count: its non-stopwords."""
    return _content_words(title)


class Bm25:
    """Okapi BM25 over pre-tokenised documents."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self._tf = [Counter(doc) for doc in docs]
        self._len = [len(doc) for doc in docs]
        self._avg = (sum(self._len) / len(docs)) if docs else 1.0
        self._df = Counter(term for doc in docs for term in set(doc))
        self._n, self._k1, self._b = len(docs), k1, b

    def score(self, terms: Iterable[str], index: int) -> float:
        tf, length = self._tf[index], self._len[index]
        total = 0.0
        for term in terms:
            freq = tf.get(term, 0)
            if not freq:
                continue
            df = self._df[term]
            idf = math.log(1 + (self._n - df + 0.5) / (df + 0.5))
            norm_ = self._k1 * (1 - self._b + self._b * length / (self._avg or 1.0))
            total += idf * freq * (self._k1 + 1) / (freq + norm_)
        return total

    def shared(self, terms: Iterable[str], index: int) -> int:
        """How many of `terms` document `index` holds."""
        tf = self._tf[index]
        return sum(1 for term in terms if term in tf)
