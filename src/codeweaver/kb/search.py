"""Hybrid knowledge-base search: dense (vector) and lexical (BM25) candidates fused by rank.

Dense vectors find paraphrases and cross-language matches (a Korean question, an English
page); BM25 finds exact identifiers, error codes and rare words that embedders blur. The two
score scales are incomparable, so they are fused by reciprocal rank (RRF, Cormack et al.
2009): each list contributes 1/(k + rank), k = 60.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codeweaver.kb.report import KbHit

if TYPE_CHECKING:
    from codeweaver.embeddings.base import Embedder
    from codeweaver.kb.lexical import LexicalIndex
    from codeweaver.memory.vector_store import VectorCollection

RRF_K = 60


def candidate_count(limit: int) -> int:
    """How many candidates each side contributes to the fusion for `limit` results."""
    return max(4 * limit, 20)


@dataclass(frozen=True)
class Fused:
    id: str
    score: float  # the RRF score over its maximum: 1.0 when first in both lists
    dense_rank: int | None  # 1-based, None when not among the dense candidates
    lexical_rank: int | None


def _ranks(ids: Sequence[str]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, pid in enumerate(ids, 1):
        ranks.setdefault(pid, rank)  # a repeated id keeps its best rank
    return ranks


def fuse(
    dense: Sequence[str], lexical: Sequence[str], k: int = RRF_K, lexical_weight: float = 1.0
) -> list[Fused]:
    """Reciprocal-rank fusion of two ranked id lists, best first.

    score = (1/(k + dense_rank) + w/(k + lexical_rank)) / ((1 + w)/(k + 1)), w the lexical
    weight (1 in the knowledge base: plain RRF), a missing rank adding nothing: in [0, 1],
    1.0 for an id first in both lists, 0.5 for one first in one list only (w = 1). Equal
    scores go to the id with the better single rank, then to the better dense rank (the
    meaning-based side), then to the smaller id, so the order is deterministic.
    """
    dense_ranks, lexical_ranks = _ranks(dense), _ranks(lexical)
    best = (1.0 + lexical_weight) / (k + 1)
    fused: list[Fused] = []
    for pid in dict.fromkeys([*dense_ranks, *lexical_ranks]):
        d, w = dense_ranks.get(pid), lexical_ranks.get(pid)
        raw = (1.0 / (k + d) if d else 0.0) + (lexical_weight / (k + w) if w else 0.0)
        fused.append(Fused(pid, raw / best, d, w))

    def order(f: Fused) -> tuple[float, int, float, str]:
        ranks = [r for r in (f.dense_rank, f.lexical_rank) if r is not None]
        dense = f.dense_rank if f.dense_rank is not None else float("inf")
        return (-f.score, min(ranks), dense, f.id)

    return sorted(fused, key=order)


def hybrid_search(
    collection: VectorCollection,
    embedder: Embedder,
    lexical: LexicalIndex,
    query: str,
    limit: int,
) -> list[KbHit]:
    """The `limit` best chunks for `query` by fused dense and BM25 ranks (see `fuse`)."""
    if limit <= 0 or not query.strip():
        return []
    n = candidate_count(limit)
    vector = embedder.embed([query])[0]
    dense = collection.query(vector, n)
    lexical_hits = lexical.search(query, n)
    rest = fuse([h.id for h in dense], [h.id for h in lexical_hits])
    payloads: dict[str, dict[str, Any]] = {h.id: h.payload for h in dense}
    hits: list[KbHit] = []
    while rest and len(hits) < limit:
        batch, rest = rest[: limit - len(hits)], rest[limit - len(hits) :]
        payloads.update(_payloads(collection, [f.id for f in batch if f.id not in payloads]))
        # A lexical id whose point is gone (another process changed the store since the
        # index was built) is skipped, and the next candidate takes its place.
        hits += [_hit(payloads[f.id], f) for f in batch if f.id in payloads]
    return hits


def _payloads(collection: VectorCollection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Payloads of the lexical-only hits, read by id (missing points are left out)."""
    if not ids:
        return {}
    return collection.retrieve(ids)


def _hit(payload: dict[str, Any], fused: Fused) -> KbHit:
    page = payload.get("page")
    return KbHit(
        path=str(payload.get("path", "")),
        display_path=str(payload.get("display_path", "")),
        title=str(payload.get("title", "")),
        text=str(payload.get("text", "")),
        chunk_index=int(payload.get("chunk_index", 0)),
        start_line=int(payload.get("start_line", 1)),
        page=int(page) if page is not None else None,
        score=fused.score,
        dense_rank=fused.dense_rank,
        lexical_rank=fused.lexical_rank,
    )
