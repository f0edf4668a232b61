"""StackEval rows as Stack Overflow posts, and the search the loopback API runs over them.

Each row becomes one question with one accepted answer. StackEval carries no ids, votes,
dates or users, so they are derived from the row's `questionId` hash: deterministic,
plausible for a 2018–2023 question (small scores, as most recent accepted answers have),
and the same on every run.

Search follows what the real service is known to do with `q`: every non-stopword term
must occur in the title or body (whole words, case-insensitive) and a `"quoted phrase"`
verbatim, so a long natural-language `q` finds nothing. Ranking is BM25, the title
counting twice.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from codeweaver.evaluation.datasets import DatasetError, read_jsonl, split_post
from codeweaver.sources.so_format import guess_tags
from codeweaver.words.stopwords import STACKEXCHANGE_SEARCH_STOPWORDS

# StackEval's sample window (January 2018 – September 2023).
WINDOW_START = int(datetime(2018, 1, 1, tzinfo=UTC).timestamp())
WINDOW_END = int(datetime(2023, 9, 30, tzinfo=UTC).timestamp())
ID_OFFSET = 1_000_000
MAX_TAGS = 5  # Stack Overflow allows five tags per question

_WORD = re.compile(r"[a-z0-9_]+")
_PHRASE = re.compile(r'"([^"]+)"')
# `[tag]` as a whole word is the site's tag syntax; `arr[10]` in code is not.
_TAG_TERM = re.compile(r"(?<!\S)\[([a-z0-9.#+-]+)\](?!\S)", re.IGNORECASE)
# `-word` excludes the word, as the site's search does (a dash that starts a token).
_EXCLUDED = re.compile(r"(?<!\S)-(\S+)")


class CorpusError(ValueError):
    """A corpus that cannot be served faithfully (e.g. two rows with the same post id)."""


def words(text: str) -> list[str]:
    """Lower-case word tokens: what `q` terms and BM25 match on."""
    return _WORD.findall(text.lower())


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _hashed(hex_id: str, salt: str, low: int, high: int) -> int:
    """A deterministic integer in [low, high] for one row and purpose."""
    digest = hashlib.sha256(f"{hex_id}:{salt}".encode()).digest()
    return low + int.from_bytes(digest[:8], "big") % (high - low + 1)


def slug(title: str) -> str:
    """The URL slug Stack Overflow appends to a question link."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:80].rstrip("-")


def escape_title(title: str) -> str:
    """A title HTML-escaped as the API sends it (`&#39;` for apostrophes)."""
    return html.escape(title, quote=True).replace("&#x27;", "&#39;")


def _fence(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    # Stack Overflow marks a fence's language as `lang-xx` on <pre>, never on <code>.
    token = tokens[idx]
    info = token.info.strip().split()[0] if token.info.strip() else ""
    cls = f' class="lang-{escapeHtml(info)} prettyprint-override"' if info else ""
    return f"<pre{cls}><code>{escapeHtml(token.content)}</code></pre>\n"


_MARKDOWN = MarkdownIt("commonmark", {"html": False})
_MARKDOWN.add_render_rule("fence", _fence)


def to_html(markdown: str) -> str:
    """Markdown as the HTML body of a post (raw HTML in the source stays escaped text)."""
    return str(_MARKDOWN.render(markdown))


def _plain(body_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", body_html))


@dataclass(frozen=True)
class User:
    """A shallow user as the API embeds it in `owner`."""

    user_id: int
    account_id: int
    reputation: int

    @property
    def display_name(self) -> str:
        return f"user{self.user_id}"  # the name Stack Overflow gives users who set none

    def to_json(self) -> dict[str, Any]:
        image = hashlib.md5(str(self.account_id).encode(), usedforsecurity=False).hexdigest()
        return {
            "account_id": self.account_id,
            "reputation": self.reputation,
            "user_id": self.user_id,
            "user_type": "registered",
            "profile_image": f"https://www.gravatar.com/avatar/{image}?s=256&d=identicon&r=PG",
            "display_name": self.display_name,
            "link": f"https://stackoverflow.com/users/{self.user_id}/{self.display_name}",
        }


def _user(hex_id: str, role: str) -> User:
    return User(
        user_id=_hashed(hex_id, role + ":user", 1_000, 22_000_000),
        account_id=_hashed(hex_id, role + ":account", 1_000, 29_000_000),
        reputation=_hashed(hex_id, role + ":rep", 1, 50_000),
    )


@dataclass(frozen=True)
class Post:
    """One StackEval row: a question and its accepted answer."""

    hex_id: str
    question_id: int
    answer_id: int
    title: str
    tags: tuple[str, ...]
    body_html: str
    answer_html: str
    question_score: int
    answer_score: int
    created: int
    answered: int
    view_count: int
    asker: User
    answerer: User
    title_words: tuple[str, ...] = field(repr=False, default=())
    body_words: tuple[str, ...] = field(repr=False, default=())
    text: str = field(repr=False, default="")  # title + body as plain text, normalised

    @property
    def link(self) -> str:
        return f"https://stackoverflow.com/questions/{self.question_id}/{slug(self.title)}"

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(self.title_words) | frozenset(self.body_words)


def question_id_of(hex_id: str) -> int:
    """The post id the loopback gives a StackEval `questionId`."""
    return int(hex_id[:7], 16) + ID_OFFSET


def answer_id_of(hex_id: str) -> int:
    """The accepted answer's id: from the other end of the hash."""
    return int(hex_id[-7:], 16) + ID_OFFSET


def _tags(tag: str, title: str) -> tuple[str, ...]:
    # StackEval names one language ("bash/shell" is two tags). Real posts also carry the
    # libraries their title names; without them a `tagged=pandas` search would miss every
    # pandas question, which the real service would not.
    found = [t.strip().lower() for t in tag.split("/") if t.strip()] + guess_tags(title)
    return tuple(dict.fromkeys(found))[:MAX_TAGS]


def make_post(hex_id: str, question: str, answer: str, tag: str) -> Post:
    title, body = split_post(question)
    body_html, answer_html = to_html(body), to_html(answer)
    plain_body = _plain(body_html)
    created = _hashed(hex_id, "created", WINDOW_START, WINDOW_END - 3 * 86_400)
    return Post(
        hex_id=hex_id,
        question_id=question_id_of(hex_id),
        answer_id=answer_id_of(hex_id),
        title=title,
        tags=_tags(tag, title),
        body_html=body_html,
        answer_html=answer_html,
        question_score=_hashed(hex_id, "qscore", 0, 3),
        # StackEval kept accepted answers with at least one upvote.
        answer_score=_hashed(hex_id, "ascore", 1, 3),
        created=created,
        answered=created + _hashed(hex_id, "delay", 60, 3 * 86_400),
        view_count=_hashed(hex_id, "views", 20, 5_000),
        asker=_user(hex_id, "asker"),
        answerer=_user(hex_id, "answerer"),
        title_words=tuple(words(title)),
        body_words=tuple(words(plain_body)),
        text=_norm(f"{title}\n{plain_body}"),
    )


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
            norm = self._k1 * (1 - self._b + self._b * length / (self._avg or 1.0))
            total += idf * freq * (self._k1 + 1) / (freq + norm)
        return total


@dataclass(frozen=True)
class Query:
    """A parsed `q`: required words, verbatim phrases, `[tag]` terms, and `-word`
    exclusions."""

    terms: tuple[str, ...]
    phrases: tuple[str, ...]
    tags: tuple[str, ...]
    excluded: tuple[str, ...] = ()

    @classmethod
    def parse(cls, q: str) -> Query:
        phrases = tuple(_norm(p) for p in _PHRASE.findall(q) if p.strip())
        rest = _PHRASE.sub(" ", q)
        tags = tuple(t.lower() for t in _TAG_TERM.findall(rest))
        rest = _TAG_TERM.sub(" ", rest)
        excluded = tuple(dict.fromkeys(w for x in _EXCLUDED.findall(rest) for w in words(x)))
        rest = _EXCLUDED.sub(" ", rest)
        terms = tuple(
            dict.fromkeys(w for w in words(rest) if w not in STACKEXCHANGE_SEARCH_STOPWORDS)
        )
        return cls(terms, phrases, tags, excluded)

    def matches(self, post: Post) -> bool:
        vocabulary = post.vocabulary
        return (
            all(t in vocabulary for t in self.terms)
            and all(p in post.text for p in self.phrases)
            and all(t in post.tags for t in self.tags)
            and not any(t in vocabulary for t in self.excluded)
        )

    @property
    def ranking_terms(self) -> list[str]:
        phrase_words = [
            w for p in self.phrases for w in words(p) if w not in STACKEXCHANGE_SEARCH_STOPWORDS
        ]
        return list(dict.fromkeys([*self.terms, *phrase_words]))


class Corpus:
    """The posts, by id, with BM25 indexes over titles and bodies."""

    def __init__(self, posts: Sequence[Post]) -> None:
        self.posts = list(posts)
        self.by_id = {p.question_id: p for p in self.posts}
        self.by_answer_id = {p.answer_id: p for p in self.posts}
        self.by_hex = {p.hex_id: p for p in self.posts}
        ids = [p.question_id for p in self.posts] + [p.answer_id for p in self.posts]
        clashes = sorted(i for i, n in Counter(ids).items() if n > 1)
        if clashes or len(self.by_hex) != len(self.posts):
            raise CorpusError(f"post ids are not unique: {clashes[:10]} (or a repeated row)")
        self._titles = Bm25([p.title_words for p in self.posts])
        self._bodies = Bm25([p.body_words for p in self.posts])

    @classmethod
    def load(cls, path: str | Path) -> Corpus:
        """StackEval JSONL (`questionId`, `question`, `answer`, `questionMetadata.tag`)."""
        posts = []
        for line, row in read_jsonl(path):
            hex_id, question, answer = row.get("questionId"), row.get("question"), row.get("answer")
            meta = row.get("questionMetadata")
            tag = meta.get("tag") if isinstance(meta, dict) else None
            valid = all(isinstance(v, str) and v.strip() for v in (question, answer, tag))
            if not isinstance(hex_id, str) or not re.fullmatch(r"[0-9a-f]{14,}", hex_id):
                raise DatasetError(path, "needs a hexadecimal `questionId`", line)
            if not valid:
                raise DatasetError(path, "needs `question`, `answer`, `questionMetadata.tag`", line)
            posts.append(make_post(hex_id, str(question), str(answer), str(tag)))
        try:
            return cls(posts)
        except CorpusError as exc:
            raise CorpusError(f"{path}: {exc}") from None

    def search(self, query: Query, *, tagged: Sequence[str] = (), title: str = "") -> list[Post]:
        """Posts matching `query`, any of `tagged` and the `title` substring, best first."""
        wanted = _norm(title)
        hits = [
            i
            for i, post in enumerate(self.posts)
            if query.matches(post)
            and (not tagged or any(t in post.tags for t in tagged))
            and (not wanted or wanted in _norm(post.title))
        ]
        terms = query.ranking_terms or words(title)
        return self._ranked(
            hits, lambda i: 2 * self._titles.score(terms, i) + self._bodies.score(terms, i)
        )

    def similar(self, title: str, *, tagged: Sequence[str] = ()) -> list[Post]:
        """Posts whose title shares a word with `title`, most similar first."""
        terms = list(
            dict.fromkeys(w for w in words(title) if w not in STACKEXCHANGE_SEARCH_STOPWORDS)
        )
        scores = {i: self._titles.score(terms, i) for i in range(len(self.posts))}
        hits = [
            i
            for i, s in scores.items()
            if s > 0 and (not tagged or any(t in self.posts[i].tags for t in tagged))
        ]
        return self._ranked(hits, scores.__getitem__)

    def _ranked(self, hits: list[int], score: Any) -> list[Post]:
        # Ties go to the higher-voted, then the older post, so the order never varies.
        ordered = sorted(
            hits,
            key=lambda i: (-score(i), -self.posts[i].question_score, self.posts[i].question_id),
        )
        return [self.posts[i] for i in ordered]
