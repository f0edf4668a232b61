"""StackEval rows as Stack Overflow posts, and the search the loopback API runs over them.

Each row becomes one question with its accepted answer. StackEval carries no ids, votes,
dates or users, so they are derived from a hash of the row: deterministic, plausible for
a 2018–2023 question (small scores, as most recent accepted answers have), and the same
on every run. Tags are the ones the data gives (StackEval's language), never guessed.

Search follows the site's syntax (`stackexchange.query`): every non-stopword term of `q`
must occur in the title or body, so a long natural-language `q` finds nothing. Ranking is
BM25, the title counting twice. `/similar` ranks titles sharing words with the one asked,
a post carrying one of the `tagged` tags first (a preference, not a filter).
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from codeweaver_eval.datasets import DatasetError, read_jsonl, split_post
from codeweaver_eval.stackexchange.query import Bm25, Query, norm, similar_terms, words

# StackEval's sample window (January 2018 – September 2023).
WINDOW_START = int(datetime(2018, 1, 1, tzinfo=UTC).timestamp())
WINDOW_END = int(datetime(2023, 9, 30, tzinfo=UTC).timestamp())
ID_OFFSET = 1_000_000
MAX_TAGS = 5  # Stack Overflow allows five tags per question
# A `/similar` title of several words needs this many of them in a related title: one
# shared word ("python", "error") relates nearly everything.
SIMILAR_MIN_SHARED = 2
# How much a `tagged` tag lifts a `/similar` result ("treated as a preference").
SIMILAR_TAG_PREFERENCE = 1.5


class CorpusError(ValueError):
    """A corpus that cannot be served faithfully (e.g. two rows with the same post id)."""


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
class Reply:
    """One answer to a post."""

    answer_id: int
    body_html: str
    score: int
    created: int
    owner: User
    accepted: bool = False


@dataclass(frozen=True)
class Post:
    """One question with its answers (StackEval's: the accepted one alone)."""

    hex_id: str
    question_id: int
    title: str
    tags: tuple[str, ...]
    body_html: str
    question_score: int
    created: int
    view_count: int
    asker: User
    answers: tuple[Reply, ...] = ()
    title_words: tuple[str, ...] = field(repr=False, default=())
    body_words: tuple[str, ...] = field(repr=False, default=())
    text: str = field(repr=False, default="")  # title + body as plain text, normalised
    body_text: str = field(repr=False, default="")

    @property
    def link(self) -> str:
        return f"https://stackoverflow.com/questions/{self.question_id}/{slug(self.title)}"

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(self.title_words) | frozenset(self.body_words)

    @property
    def answer_count(self) -> int:
        return len(self.answers)

    @property
    def accepted(self) -> Reply | None:
        return next((a for a in self.answers if a.accepted), None)

    @property
    def has_accepted(self) -> bool:
        return self.accepted is not None

    @property
    def answer_id(self) -> int | None:
        """The accepted answer's id (None without one)."""
        accepted = self.accepted
        return accepted.answer_id if accepted else None

    @property
    def is_answered(self) -> bool:
        """As the API means it: an accepted answer, or one with a positive score."""
        return self.has_accepted or any(a.score > 0 for a in self.answers)

    @property
    def last_activity(self) -> int:
        return max([self.created, *(a.created for a in self.answers)])


def question_id_of(hex_id: str) -> int:
    """The post id the loopback gives a StackEval `questionId`."""
    return int(hex_id[:7], 16) + ID_OFFSET


def answer_id_of(hex_id: str) -> int:
    """The accepted answer's id: from the other end of the hash."""
    return int(hex_id[-7:], 16) + ID_OFFSET


def stackeval_tags(tag: str) -> tuple[str, ...]:
    """StackEval's language as Stack Overflow tags (`bash/shell` is two)."""
    found = [t.strip().lower() for t in tag.split("/") if t.strip()]
    return tuple(dict.fromkeys(found))[:MAX_TAGS]


def build_post(
    key: str,
    question_id: int,
    title: str,
    body_markdown: str,
    tags: Sequence[str],
    answers: Sequence[tuple[int, str, bool]],
) -> Post:
    """A post from data: `answers` are (answer id, Markdown, accepted); everything the data
    lacks (dates, votes, users) is derived from `key`."""
    body_html = to_html(body_markdown) if body_markdown.strip() else ""
    plain_body = _plain(body_html)
    created = _hashed(key, "created", WINDOW_START, WINDOW_END - 3 * 86_400)
    replies = []
    for n, (answer_id, markdown, accepted) in enumerate(answers):
        salt = "" if n == 0 else f":{n}"  # the first answer keeps the original derivation
        replies.append(
            Reply(
                answer_id=answer_id,
                body_html=to_html(markdown),
                # StackEval kept accepted answers with at least one upvote.
                score=_hashed(key, "ascore" + salt, 1 if accepted else 0, 3),
                created=created + _hashed(key, "delay" + salt, 60, 3 * 86_400),
                owner=_user(key, "answerer" + salt),
                accepted=accepted,
            )
        )
    return Post(
        hex_id=key,
        question_id=question_id,
        title=title,
        tags=tuple(dict.fromkeys(t.lower() for t in tags))[:MAX_TAGS],
        body_html=body_html,
        question_score=_hashed(key, "qscore", 0, 3),
        created=created,
        view_count=_hashed(key, "views", 20, 5_000),
        asker=_user(key, "asker"),
        answers=tuple(replies),
        title_words=tuple(words(title)),
        body_words=tuple(words(plain_body)),
        text=norm(f"{title}\n{plain_body}"),
        body_text=norm(plain_body),
    )


def make_post(hex_id: str, question: str, answer: str, tag: str) -> Post:
    """A StackEval row: its question, its one accepted answer, its language tag."""
    title, body = split_post(question)
    accepted = (answer_id_of(hex_id), answer, True)
    return build_post(hex_id, question_id_of(hex_id), title, body, stackeval_tags(tag), [accepted])


def load_stackeval(path: str | Path) -> list[Post]:
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
    return posts


class Corpus:
    """The posts, by id, with BM25 indexes over titles and bodies."""

    def __init__(self, posts: Sequence[Post]) -> None:
        self.posts = list(posts)
        self.by_id = {p.question_id: p for p in self.posts}
        self.by_answer_id = {a.answer_id: p for p in self.posts for a in p.answers}
        self.by_hex = {p.hex_id: p for p in self.posts}
        ids = [p.question_id for p in self.posts] + [
            a.answer_id for p in self.posts for a in p.answers
        ]
        clashes = sorted(i for i, n in Counter(ids).items() if n > 1)
        if clashes or len(self.by_hex) != len(self.posts):
            raise CorpusError(f"post ids are not unique: {clashes[:10]} (or a repeated row)")
        self._titles = Bm25([p.title_words for p in self.posts])
        self._bodies = Bm25([p.body_words for p in self.posts])

    @classmethod
    def load(cls, path: str | Path, extra: Sequence[Post] = ()) -> Corpus:
        """StackEval's posts, and `extra` posts served beside them (distractors)."""
        posts = load_stackeval(path)
        try:
            return cls([*posts, *extra])
        except CorpusError as exc:
            raise CorpusError(f"{path}: {exc}") from None

    def search(self, query: Query, *, tagged: Sequence[str] = (), title: str = "") -> list[Post]:
        """Posts matching `query`, any of `tagged` and the `title` substring, best first."""
        wanted = norm(title)
        hits = [
            i
            for i, post in enumerate(self.posts)
            if query.matches(post)
            and (not tagged or any(t in post.tags for t in tagged))
            and (not wanted or wanted in norm(post.title))
        ]
        terms = query.ranking_terms or words(title)
        return self._ranked(
            hits, lambda i: 2 * self._titles.score(terms, i) + self._bodies.score(terms, i)
        )

    def similar(self, title: str, *, tagged: Sequence[str] = ()) -> list[Post]:
        """Posts whose title shares words with `title`, most similar first; a post with
        one of `tagged` is lifted, not required."""
        terms = similar_terms(title)
        needed = min(SIMILAR_MIN_SHARED, len(terms))
        scores: dict[int, float] = {}
        for i, post in enumerate(self.posts):
            if not needed or self._titles.shared(terms, i) < needed:
                continue
            preferred = tagged and any(t in post.tags for t in tagged)
            scores[i] = self._titles.score(terms, i) * (SIMILAR_TAG_PREFERENCE if preferred else 1)
        return self._ranked(list(scores), scores.__getitem__)

    def _ranked(self, hits: list[int], score: Any) -> list[Post]:
        # Ties go to the higher-voted, then the older post, so the order never varies.
        ordered = sorted(
            hits,
            key=lambda i: (-score(i), -self.posts[i].question_score, self.posts[i].question_id),
        )
        return [self.posts[i] for i in ordered]
