"""The semantic answer cache: cosine finds candidates, rules decide whether one is a hit.

Keys are canonical (English) questions. A lookup embeds the key, takes the nearest
cached questions above a cosine threshold, and serves the first one that
`memory.verify.same_question` accepts and that has not expired. Entries live in the
vector store (one collection per embedding model and dimension, so switching models
never mixes vectors) with their answer, sources, model, creation time and hit count.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from codeweaver.embeddings.base import Embedder
from codeweaver.memory.cache import CacheEntry, CacheStats, normalise_question
from codeweaver.memory.vector_store import VectorCollection
from codeweaver.memory.verify import Verdict, content_size, same_question
from codeweaver.vocabulary import SearchResult

# Calibrated on ../shared/data/pairs (see README): the verifier, not the threshold,
# carries precision, so the threshold only bounds the candidates it sees.
DEFAULT_THRESHOLD = 0.7
# A question of one or two subject words gives the rules little to compare ("reverse a
# list"), so its embedding must be much closer before a candidate is even considered.
SHORT_QUESTION_WORDS = 2
SHORT_QUESTION_THRESHOLD = 0.9
CANDIDATES = 5
_NAMESPACE = uuid.UUID("5b0c1a4e-7a43-4c8e-9b1f-0a4f2d6c8e11")


@dataclass(frozen=True)
class CacheDecision:
    """Why a lookup hit or missed: shown in the steps and used by `eval cache`."""

    entry: CacheEntry | None
    cosine: float | None
    reason: str


def decide(question: str, candidate: str, cosine: float, threshold: float) -> Verdict:
    """The cache's decision for one pair: above the threshold and the same question."""
    if cosine < threshold:
        return Verdict(False, f"cosine {cosine:.2f} < {threshold:.2f}")
    verdict = same_question(question, candidate)
    short = min(content_size(question), content_size(candidate)) <= SHORT_QUESTION_WORDS
    if verdict.same and short and cosine < max(threshold, SHORT_QUESTION_THRESHOLD):
        return Verdict(
            False, f"short question: cosine {cosine:.2f} < {SHORT_QUESTION_THRESHOLD:.2f}"
        )
    return verdict


class SemanticAnswerCache:
    """`AnswerCache` over a vector collection, with rule-based verification."""

    def __init__(
        self,
        collection: VectorCollection,
        embedder: Embedder,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        ttl_seconds: float | None = None,
    ) -> None:
        self.collection = collection
        self.embedder = embedder
        self.threshold = threshold
        self.ttl_seconds = ttl_seconds
        self._lock = threading.Lock()

    @staticmethod
    def point_id(canonical_question: str) -> str:
        return str(uuid.uuid5(_NAMESPACE, normalise_question(canonical_question)))

    def _entry(self, payload: dict[str, Any]) -> CacheEntry:
        return CacheEntry(
            question=str(payload.get("question", "")),
            answer=str(payload.get("answer", "")),
            sources=json.loads(payload.get("sources", "[]")),
            model=str(payload.get("model", "")),
            created_at=float(payload.get("created_at", 0.0)),
            hits=int(payload.get("hits", 0)),
            key=str(payload.get("key", "")),
        )

    def _expired(self, entry: CacheEntry) -> bool:
        return self.ttl_seconds is not None and time.time() - entry.created_at > self.ttl_seconds

    def explain(self, canonical_question: str) -> CacheDecision:
        """Look up `canonical_question` and say why it hit or missed."""
        if not normalise_question(canonical_question):
            return CacheDecision(None, None, "empty question")
        vector = self.embedder.embed([canonical_question])[0]
        with self._lock:
            hits = self.collection.query(vector, CANDIDATES)
            rejected: list[str] = []
            for hit in hits:
                entry = self._entry(hit.payload)
                verdict = decide(canonical_question, entry.question, hit.score, self.threshold)
                if not verdict.same:
                    rejected.append(f"{entry.question!r}: {verdict.reason}")
                    continue
                if self._expired(entry):
                    self.collection.delete_ids([hit.id])
                    rejected.append(f"{entry.question!r}: expired")
                    continue
                self.collection.set_payload([hit.id], {"hits": entry.hits + 1})
                return CacheDecision(entry, hit.score, f"cosine {hit.score:.2f}, same question")
        nearest = hits[0].score if hits else None
        return CacheDecision(None, nearest, "; ".join(rejected[:2]) or "nothing similar cached")

    def lookup(self, canonical_question: str) -> CacheEntry | None:
        return self.explain(canonical_question).entry

    def store(
        self, canonical_question: str, answer: str, sources: list[SearchResult], model: str
    ) -> None:
        key = normalise_question(canonical_question)
        if not key or not answer.strip():
            return
        vector = self.embedder.embed([canonical_question])
        payload = {
            "key": key,
            "question": canonical_question,
            "answer": answer,
            "sources": json.dumps(sources),
            "model": model,
            "created_at": time.time(),
            "hits": 0,
        }
        with self._lock:
            self.collection.upsert([self.point_id(canonical_question)], vector, [payload])

    def forget(self, canonical_question: str) -> bool:
        """Remove the entry of this question, or the one a lookup of it would serve."""
        with self._lock:
            exact = self.point_id(canonical_question)
            if self.collection.count({"key": normalise_question(canonical_question)}):
                self.collection.delete_ids([exact])
                return True
        served = self.explain(canonical_question).entry
        if served is None:
            return False
        with self._lock:
            self.collection.delete_ids([self.point_id(served.question)])
        return True

    def entries(self, limit: int = 50) -> list[CacheEntry]:
        with self._lock:
            found = [self._entry(payload) for _, payload in self.collection.scroll()]
        found.sort(key=lambda e: e.created_at, reverse=True)
        return found[:limit]

    def stats(self) -> CacheStats:
        with self._lock:
            payloads = [p for _, p in self.collection.scroll(fields=["hits"])]
        hits = sum(int(p.get("hits", 0)) for p in payloads)
        return CacheStats(
            len(payloads), hits, f"{self.collection.describe()} ({self.collection.name})"
        )

    def clear(self) -> int:
        with self._lock:
            ids = [pid for pid, _ in self.collection.scroll(fields=[])]
            self.collection.delete_ids(ids)
        return len(ids)
