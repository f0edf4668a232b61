"""What the on-disk BM25 indexes of the docs sources share: atomic replacement, removal of
stale fingerprints, Lucene idf sums, the [0, 1) score mapping, the words of a docs index
and the precision-first query.

An index lives in a folder named by the first 32 hex digits of its fingerprint; a build
writes `.tmp-*` and is renamed into place, an index it replaces is moved to `.old-*` first.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from codeweaver.sources.base import SourceError
from codeweaver.words import stem_for_doc_search
from codeweaver.words.patterns import DOC_SEARCH_PIECE, DOC_SEARCH_WORD

logger = logging.getLogger(__name__)
T = TypeVar("T")
B = TypeVar("B")

# The folders an index directory's own builds leave; anything else (project environments,
# a parse cache) belongs to someone else and is never removed.
INDEX_FOLDER = re.compile(r"[0-9a-f]{32}|\.old-.+|\.tmp-.+")
# A `.tmp-*` folder younger than this may be another process's build in progress.
BUILD_GRACE_SECONDS = 3600


def replace_index(tmp: Path, final: Path) -> None:
    """Move the new index into place atomically (an old or corrupt one moved aside first)."""
    trash: Path | None = None
    if final.exists():
        trash = final.with_name(f".old-{final.name[:12]}-{uuid.uuid4().hex[:8]}")
        os.replace(final, trash)
    os.replace(tmp, final)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def open_or_build(
    index_dir: Path,
    fingerprint: str,
    *,
    manifest: str,
    load: Callable[[Path], T],
    build: Callable[[Path], B],
    load_error: type[Exception],
    what: str,
) -> tuple[T, B | None]:
    """The index of `fingerprint` under `index_dir`: loaded when a complete one is there,
    else built by `build(tmp)` into a `.tmp-*` folder, moved into place and loaded, the
    older indexes removed. Returns (index, what `build` returned, or None when loaded)."""
    final = index_dir / fingerprint[:32]
    if (final / manifest).exists():
        try:
            return load(final), None
        except load_error as exc:
            logger.warning("rebuilding the %s index: %s", what, exc)
    index_dir.mkdir(parents=True, exist_ok=True)
    tmp = index_dir / f".tmp-{fingerprint[:12]}-{uuid.uuid4().hex[:8]}"
    try:
        built = build(tmp)
        replace_index(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    remove_other_indexes(index_dir, keep=final.name)
    return load(final), built


def remove_other_indexes(index_dir: Path, keep: str) -> None:
    """Delete indexes of other fingerprints and leftovers of crashed builds."""
    now = time.time()
    try:
        children = list(index_dir.iterdir())
    except OSError:
        return
    for child in children:
        if child.name == keep or not child.is_dir() or not INDEX_FOLDER.fullmatch(child.name):
            continue
        if child.name.startswith(".tmp-"):
            try:
                if now - child.stat().st_mtime < BUILD_GRACE_SECONDS:
                    continue  # maybe another process is building right now
            except OSError:
                continue
        shutil.rmtree(child, ignore_errors=True)


def idf_sum(retriever: Any, vocab: Mapping[str, int], n_docs: int, tokens: Iterable[str]) -> float:
    """Sum of the (Lucene, as bm25s computes it) idf of the tokens; a token absent from the
    index has the highest idf (document frequency 0)."""
    indptr = retriever.scores["indptr"]
    total = 0.0
    for token in tokens:
        token_id = vocab.get(token)
        df = 0
        if token_id is not None and token_id + 1 < len(indptr):
            df = int(indptr[token_id + 1] - indptr[token_id])
        total += math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return total


def normalise_score(raw: float, half_point: float) -> float:
    """`raw / (raw + half_point)`: monotone in the BM25 score, in [0, 1), 0.5 at `half_point`
    (each source sets it as a share of the summed idf of the question's words)."""
    if raw <= 0:
        return 0.0
    return raw / (raw + max(half_point, 1e-9))


def doc_words(
    text: str, stopwords: frozenset[str], *, names: bool = False, wholes: bool = True
) -> list[str]:
    """Lowercased, stemmed words of `text` for a docs index; dotted, underscored and
    camelCase names also whole (`wholes`: `user.get_name`, `removealllisteners`). `names`:
    also unstemmed forms and stopwords, which API names are made of (`on`, `off`, `once`)."""
    tokens: list[str] = []
    for word in DOC_SEARCH_WORD.findall(text):
        low = word.lower()
        if wholes and ("." in low or "_" in low.strip("_")) and len(low) > 2:
            tokens.append(low.strip("._"))
        for part in re.split(r"[._]+", word):
            pieces = DOC_SEARCH_PIECE.findall(part)
            if wholes and len(pieces) > 1:  # `EventEmitter`, `eventemitter3`
                tokens.append(part.lower())
            for piece in pieces:
                low = piece.lower()
                if len(low) < 2 or (low in stopwords and not names):
                    continue
                stemmed = stem_for_doc_search(low)
                tokens.append(stemmed)
                if names and stemmed != low:
                    tokens.append(low)
    return tokens


class PrecisionFirstBm25:
    """A bm25s retriever queried precision first: an entry is returned only when its score
    (`normalise_score`, 0.5 where its BM25 reaches `half_point` of the question's idf mass)
    is at least `min_score` and it holds words worth `min_coverage` of that mass (a name's
    word repeated scores high alone). A question the docs do not answer gets nothing rather
    than an entry sharing a word or two with it."""

    def __init__(
        self,
        retriever: Any,
        n_docs: int,
        *,
        half_point: float,
        min_score: float,
        min_coverage: float,
    ) -> None:
        self.retriever = retriever
        self.vocab: dict[str, int] = retriever.vocab_dict
        self.n_docs = n_docs
        self.half_point, self.min_score, self.min_coverage = half_point, min_score, min_coverage

    def matches(
        self, plain: list[str], extra: list[str], limit: int, min_score: float | None = None
    ) -> list[tuple[int, float]]:
        """Up to `limit` (entry position, score in [0, 1)), best first. `plain`: the
        question's words, whose idf mass sets the bar; `extra`: expansions, which only add."""
        known = [t for t in (*plain, *extra) if t in self.vocab]
        if limit <= 0 or not known:
            return []
        bar = self.min_score if min_score is None else min_score
        scores = np.asarray(self.retriever.get_scores(known), dtype=np.float64)
        core = plain if any(t in self.vocab for t in plain) else known
        # Words the docs never mention still count: a question about "CORS" must not score
        # well on entries that only match its other words.
        half = self.half_point * self.idf_sum(core)
        k = min(max(limit * 5, 50), len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        covered = self.coverage(core, top)
        found: list[tuple[int, float]] = []
        for position, i in enumerate(top):
            score = normalise_score(float(scores[i]), half)
            if score >= bar and covered[position] >= self.min_coverage:
                found.append((int(i), score))
        return found[:limit]

    def coverage(self, tokens: list[str], docs: NDArray[np.int64]) -> NDArray[np.float64]:
        """For each of `docs`, the share of the tokens' idf mass it contains: a name word
        repeated three times (a high BM25) still covers one word of the question."""
        indptr, indices = self.retriever.scores["indptr"], self.retriever.scores["indices"]
        covered = np.zeros(len(docs))
        total = 0.0
        for token in tokens:
            idf = self.idf_sum([token])
            total += idf
            token_id = self.vocab.get(token)
            if token_id is not None and token_id + 1 < len(indptr):
                holders = indices[indptr[token_id] : indptr[token_id + 1]]
                covered += idf * np.isin(docs, holders)
        return covered / total if total else covered

    def idf_sum(self, tokens: list[str]) -> float:
        return idf_sum(self.retriever, self.vocab, self.n_docs, tokens)


class BuildGate:
    """One build of a source's index at a time, and searches that never wait for it.

    `hold(wait=True)` (preparation) waits for a build in progress; `hold(wait=False)` (a
    search) gives up after `SEARCH_PATIENCE` seconds with `IndexBuilding`, so the run goes
    on without this source, and `building()` says how far the build is."""

    SEARCH_PATIENCE = 2.0

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self.phase: tuple[str, int, int] | None = None

    @contextlib.contextmanager
    def hold(self, *, wait: bool) -> Iterator[None]:
        if not self._lock.acquire(timeout=-1 if wait else self.SEARCH_PATIENCE):
            raise IndexBuilding(f"{self.name}: {self.building() or 'the index is being built'}")
        try:
            yield
        finally:
            self.phase = None
            self._lock.release()

    def tracked(
        self, progress: Callable[[str, int, int], None] | None
    ) -> Callable[[str, int, int], None]:
        """`progress`, also kept for `building()`."""

        def track(phase: str, done: int, total: int) -> None:
            self.phase = (phase, done, total)
            if progress is not None:
                progress(phase, done, total)

        return track

    def building(self) -> str | None:
        """`building the docs index: parsing distributions 4/9`, or None between builds."""
        phase = self.phase
        if phase is None:
            return None
        name, step, steps = phase
        count = f" {step:,}/{steps:,}" if steps > 1 else ""
        return f"building the docs index: {name.lower()}{count}"


class IndexBuilding(SourceError):
    """A search met the index being built: the run goes on without this source."""
