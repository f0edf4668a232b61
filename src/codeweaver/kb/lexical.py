"""The knowledge base's lexical side: a tokenizer for code-ish English and Korean, and BM25.

Tokens (`tokenize`, the same for chunks and queries):
  * Latin words and numbers, lowercased; English function words and request phrasing
    (`codeweaver.words.STOPWORDS`) dropped, plurals folded (`stem_for_doc_search`);
  * identifiers joined by `_` or `.` are kept whole *and* split into their parts, camelCase
    included (`user.get_name` -> `user.get_name`, `user`, `get`, `name`), so an exact name
    (`CW_DEPLOY_TOKEN`, `E1234`) is a rare, high-idf token while its parts still match prose;
  * Hangul runs become overlapping character bigrams (a one-character run stays whole):
    Korean glues particles and endings to words, and bigrams let `배포를` match `배포는`
    through `배포` without a morphological analyser.

The index (`LexicalIndex`) is bm25s over pre-tokenised chunks, built in memory; it is small
(a few MB for tens of thousands of chunks) and quick to build, so it is never saved:
`LexicalCache` rebuilds it when the knowledge base changed.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from codeweaver.words import STOPWORDS, stem_for_doc_search
from codeweaver.words.patterns import DOC_SEARCH_PIECE

if TYPE_CHECKING:
    import bm25s

# Lucene BM25 defaults: chunks are of similar length (see `codeweaver.kb.chunking`).
BM25_K1 = 1.2
BM25_B = 0.75

#: A Latin word or identifier (parts joined by `_` or `.`), or a run of Hangul syllables.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[._][A-Za-z0-9]+)*|[\uac00-\ud7a3]+")
_JOINERS = re.compile(r"[._]")


def _hangul_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _split_camel(part: str) -> list[str]:
    """`getName` -> `getName`, `get`, `Name`; one-letter pieces (`E1234` -> `E`) say nothing."""
    pieces = DOC_SEARCH_PIECE.findall(part)
    if len(pieces) <= 1:
        return [part]
    return [part, *(p for p in pieces if len(p) > 1)]


def _word(word: str) -> list[str]:
    """One plain Latin word: its camelCase pieces, stemmed; stopwords dropped."""
    low = word.lower()
    if low in STOPWORDS:
        return []
    return [stem_for_doc_search(p.lower()) for p in _split_camel(word)]


def tokenize(text: str) -> list[str]:
    """BM25 tokens of a chunk or a query (see the module docstring)."""
    tokens: list[str] = []
    for match in _TOKEN.findall(text):
        if "\uac00" <= match[0] <= "\ud7a3":
            tokens += _hangul_bigrams(match)
        elif _JOINERS.search(match):
            tokens.append(match.lower())
            # Parts of a named identifier are kept even when they are stopwords (`get`).
            for part in _JOINERS.split(match):
                tokens += [stem_for_doc_search(p.lower()) for p in _split_camel(part)]
        else:
            tokens += _word(match)
    return tokens


def _bm25s() -> ModuleType:
    """bm25s, imported on the first index (importing `codeweaver.kb` stays light)."""
    import logging

    import bm25s

    # bm25s forces its own logger to DEBUG on import, which would print index internals.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    module: ModuleType = bm25s
    return module


@dataclass(frozen=True)
class LexicalHit:
    id: str
    score: float  # raw BM25: only its order within one query means anything


class LexicalIndex:
    """BM25 over the chunks `texts`, known by `ids` (the vector store's point ids)."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        if len(ids) != len(texts):
            raise ValueError("ids and texts must have the same length")
        self.ids = list(ids)
        self._retriever: bm25s.BM25 | None = None
        if self.ids:
            retriever = _bm25s().BM25(k1=BM25_K1, b=BM25_B)
            # No empty token: bm25s would put it in the vocabulary but not in the score
            # matrix, and querying it fails. Unknown query tokens are dropped in `search`.
            retriever.index(
                [tokenize(t) for t in texts], create_empty_token=False, show_progress=False
            )
            self._retriever = retriever

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: str, limit: int) -> list[LexicalHit]:
        """The best `limit` chunks sharing a token with `query`, best first."""
        if self._retriever is None or limit <= 0:
            return []
        vocab = self._retriever.vocab_dict
        tokens = [t for t in tokenize(query) if t in vocab]
        if not tokens:
            return []
        scores = np.asarray(self._retriever.get_scores(tokens), dtype=np.float64)
        matched = np.flatnonzero(scores > 0)
        if len(matched) > limit:
            matched = matched[np.argpartition(-scores[matched], limit - 1)[:limit]]
        # Stable sort on the index first, so equal scores keep the store's order.
        order = sorted(matched.tolist(), key=lambda i: (-scores[i], i))
        return [LexicalHit(self.ids[i], float(scores[i])) for i in order]


Loader = Callable[[], tuple[list[str], list[str]]]  # -> (ids, texts)


class LexicalCache:
    """One `LexicalIndex`, rebuilt whenever the caller's `key` changes. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: Hashable | None = None
        self._index: LexicalIndex | None = None
        self.builds = 0  # how many times it was built (tests, logs)

    def get(self, key: Hashable, load: Loader) -> LexicalIndex:
        # Building under the lock: concurrent first searches wait for one build.
        with self._lock:
            if self._index is None or key != self._key:
                ids, texts = load()
                self._index = LexicalIndex(ids, texts)
                self._key = key
                self.builds += 1
            return self._index

    def clear(self) -> None:
        with self._lock:
            self._index, self._key = None, None
