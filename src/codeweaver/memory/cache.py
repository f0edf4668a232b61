"""The answer cache interface and its exact-match implementation on SQLite.

The key is the `canonical_question` from `analyze_question`. `ExactAnswerCache` matches
the normalised text only; the semantic cache plugs into the same `AnswerCache` protocol.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from codeweaver.vocabulary import SearchResult


@dataclass(frozen=True)
class CacheEntry:
    question: str
    answer: str
    sources: list[SearchResult]
    model: str
    created_at: float = field(default_factory=time.time)
    hits: int = 0
    key: str = ""


@dataclass(frozen=True)
class CacheStats:
    entries: int
    hits: int
    path: str


class AnswerCache(Protocol):
    """What the graph needs from a cache of answers."""

    def lookup(self, canonical_question: str) -> CacheEntry | None: ...

    def store(
        self, canonical_question: str, answer: str, sources: list[SearchResult], model: str
    ) -> None: ...

    def forget(self, canonical_question: str) -> bool: ...

    def entries(self, limit: int = 50) -> list[CacheEntry]: ...

    def stats(self) -> CacheStats: ...

    def clear(self) -> int: ...


class CacheStoreError(RuntimeError):
    """The cache file cannot be used; the message names it and what to do."""


_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def normalise_question(text: str) -> str:
    """Case-, width- and punctuation-insensitive form of a question: the cache key (the exact
    cache's primary key, the semantic cache's point id), not a scoring normalisation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _PUNCT.sub(" ", text).strip()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""


class ExactAnswerCache:
    """Answers keyed by the normalised canonical question, persisted in SQLite."""

    def __init__(self, path: Path, ttl_seconds: float | None = None) -> None:
        self.path = path
        self.ttl_seconds = ttl_seconds
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=10)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise CacheStoreError(
                f"answer cache {path} cannot be opened ({exc}); move it aside or run "
                "`codeweaver cache clear`"
            ) from exc

    def _row_to_entry(self, row: tuple[Any, ...]) -> CacheEntry:
        key, question, answer, sources, model, created_at, hits = row
        return CacheEntry(question, answer, json.loads(sources), model, created_at, hits, key)

    def lookup(self, canonical_question: str) -> CacheEntry | None:
        key = normalise_question(canonical_question)
        if not key:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT key, question, answer, sources, model, created_at, hits "
                "FROM answers WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None:
                return None
            entry = self._row_to_entry(row)
            if self.ttl_seconds is not None and time.time() - entry.created_at > self.ttl_seconds:
                self._db.execute("DELETE FROM answers WHERE key = ?", (key,))
                self._db.commit()
                return None
            self._db.execute("UPDATE answers SET hits = hits + 1 WHERE key = ?", (key,))
            self._db.commit()
        return entry

    def store(
        self, canonical_question: str, answer: str, sources: list[SearchResult], model: str
    ) -> None:
        key = normalise_question(canonical_question)
        if not key or not answer.strip():
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, 0)",
                (key, canonical_question, answer, json.dumps(sources), model, time.time()),
            )
            self._db.commit()

    def forget(self, canonical_question: str) -> bool:
        key = normalise_question(canonical_question)
        with self._lock:
            cursor = self._db.execute("DELETE FROM answers WHERE key = ?", (key,))
            self._db.commit()
        return cursor.rowcount > 0

    def entries(self, limit: int = 50) -> list[CacheEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, question, answer, sources, model, created_at, hits "
                "FROM answers ORDER BY created_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [self._row_to_entry(row) for row in rows]

    def stats(self) -> CacheStats:
        with self._lock:
            count, hits = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM answers"
            ).fetchone()
        return CacheStats(count, hits, str(self.path))

    def clear(self) -> int:
        with self._lock:
            cursor = self._db.execute("DELETE FROM answers")
            self._db.commit()
        return cursor.rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()


class NullCache:
    """A cache that never hits and stores nothing (`CODEWEAVER_CACHE=false`)."""

    def lookup(self, canonical_question: str) -> CacheEntry | None:
        return None

    def store(
        self, canonical_question: str, answer: str, sources: list[SearchResult], model: str
    ) -> None:
        return None

    def forget(self, canonical_question: str) -> bool:
        return False

    def entries(self, limit: int = 50) -> list[CacheEntry]:
        return []

    def stats(self) -> CacheStats:
        return CacheStats(0, 0, "(disabled)")

    def clear(self) -> int:
        return 0
