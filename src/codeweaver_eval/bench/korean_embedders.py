"""Benchmark: which embedder finds a Korean question's duplicate among many questions.

Data (public, not our fixtures):
- Korean question pairs (songys, `pairs/korean_songys/kor_pair_train.csv`, MIT). Its
  label is inverted: `is_duplicate` 0 means "same question", so it is read with
  `load_pairs(..., invert_labels=True)`, as `codeweaver eval cache --invert-label` does.
  The corpus is every distinct question of the file (both columns). For each duplicate
  pair (q1, q2) with q1 != q2, every other question is ranked by cosine to q1; reported:
  recall@1/@5/@10 and MRR of q2 (ties count against q2, so an embedder that maps many
  texts to one vector, like MiniLM turning Hangul into `[UNK]`, gains nothing from
  them). A lower bound: the file has unlabelled duplicates among the other questions.
  Also the pair AUC (duplicate vs non-duplicate pairs, by cosine).
- CoNaLa intent pairs (`pairs/conala/conala_pairs_train.jsonl`), English: AUC of
  `positive` against `hard_neg` pairs (lexically close, different meaning) on a seeded
  sample, and the mean cosine gap between the two; the sanity check that the
  multilingual models are not much worse on English.

Speed: texts per second embedding a fixed sample in batches of 64 (Korean questions and
CoNaLa questions apart); load: seconds from creating the embedder to its first vector;
size: the installed package holding the weights (all its files).

Vectors are cached in `--cache-dir` by embedder and texts, so a second run only measures
speed and load again.

    .venv/bin/python -m codeweaver_eval.bench.korean_embedders [--data ../shared/data] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from codeweaver.config import Settings
from codeweaver.embeddings import (
    Embedder,
    create_embedder,
    minilm,
    multilingual_e5,
    use_multilingual,
)
from codeweaver.embeddings.base import clear_shared_embedders
from codeweaver_eval.cache_eval import Pair, load_pairs
from codeweaver_eval.repository import SHARED_DATA

KOREAN = Path("pairs/korean_songys/kor_pair_train.csv")
CONALA = Path("pairs/conala/conala_pairs_train.jsonl")
EMBEDDERS = ["minilm", "multilingual-e5-small", "use-multilingual"]
PACKAGES = {  # the import package that holds each model's weights
    "minilm": minilm.PACKAGE,
    "multilingual-e5-small": multilingual_e5.PACKAGE,
    "use-multilingual": use_multilingual.PACKAGE,
}
BATCH = 64
QUERY_BLOCK = 256  # queries scored at a time: 256 × 12,653 cosines ≈ 13 MB
BAR = 0.2  # recall@1 above MiniLM's that an embedder must reach to be chosen for Korean

F32 = NDArray[np.float32]


@dataclass
class Result:
    name: str
    load_s: float = 0.0
    size_mb: float = 0.0
    speed: dict[str, float] = field(default_factory=dict)
    retrieval: dict[str, float] = field(default_factory=dict)
    korean_auc: float = 0.0
    conala_auc: float = 0.0
    conala_gap: float = 0.0


# -- data -------------------------------------------------------------------------------


def korean_task(data: Path, limit: int | None) -> tuple[list[str], list[Pair], list[Pair]]:
    """Distinct questions, the duplicate pairs to search, and all pairs (for AUC)."""
    pairs = load_pairs(data / KOREAN, invert_labels=True, limit=limit)
    corpus = sorted({text for pair in pairs for text in (pair.q1, pair.q2)})
    queries = [pair for pair in pairs if pair.same and pair.q1 != pair.q2]
    return corpus, queries, pairs


def conala_sample(data: Path, per_kind: int) -> list[Pair]:
    pairs = [p for p in load_pairs(data / CONALA) if p.kind in {"positive", "hard_neg"}]
    rng = random.Random(0)
    out: list[Pair] = []
    for kind in ("positive", "hard_neg"):
        of_kind = [p for p in pairs if p.kind == kind]
        out += rng.sample(of_kind, min(per_kind, len(of_kind)))
    return out


# -- measuring ---------------------------------------------------------------------------


def package_size_mb(package: str) -> float:
    spec = importlib.util.find_spec(package)
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    # Wheels repaired by auditwheel keep their shared libraries in `<package>.libs`.
    folders += [f.with_name(f.name + ".libs") for f in folders]
    files = (f for folder in folders if folder.is_dir() for f in folder.rglob("*"))
    total = sum(f.stat().st_size for f in files if f.is_file() and "__pycache__" not in f.parts)
    return total / 1e6


def embed_batched(embedder: Embedder, texts: list[str]) -> F32:
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.concatenate(
        [embedder.embed(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
    )


def cached_vectors(embedder: Embedder, texts: list[str], cache: Path | None) -> F32:
    """Vectors of `texts`, from `cache` when this embedder already embedded exactly them."""
    if cache is None:
        return embed_batched(embedder, texts)
    digest = hashlib.sha256("\x00".join([embedder.name, *texts]).encode("utf-8", "replace"))
    path = cache / f"{embedder.name.replace(':', '_')}-{digest.hexdigest()[:24]}.npy"
    if path.is_file():
        vectors: F32 = np.load(path)
        return vectors
    vectors = embed_batched(embedder, texts)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def texts_per_second(embedder: Embedder, texts: list[str]) -> float:
    start = time.perf_counter()
    embed_batched(embedder, texts)
    return len(texts) / max(time.perf_counter() - start, 1e-9)


def retrieval(vectors: F32, index: dict[str, int], queries: list[Pair]) -> dict[str, float]:
    """Recall@k and MRR of q2 when q1 searches every other question."""
    sources = np.array([index[p.q1] for p in queries])
    targets = np.array([index[p.q2] for p in queries])
    ranks = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), QUERY_BLOCK):
        rows = slice(start, start + QUERY_BLOCK)
        scores = vectors[sources[rows]] @ vectors.T
        scores[np.arange(scores.shape[0]), sources[rows]] = -np.inf  # not itself
        wanted = scores[np.arange(scores.shape[0]), targets[rows]]
        # Every other question within float noise of q2 counts as ranked above it.
        ranks[rows] = (scores >= wanted[:, None] - 1e-6).sum(axis=1)
    out = {f"r@{k}": float((ranks <= k).mean()) for k in (1, 5, 10)}
    out["mrr"] = float((1.0 / ranks).mean())
    return out


def pair_cosines(vectors: F32, index: dict[str, int], pairs: list[Pair]) -> F32:
    a = vectors[[index[p.q1] for p in pairs]]
    b = vectors[[index[p.q2] for p in pairs]]
    cosines: F32 = np.einsum("ij,ij->i", a, b)
    return cosines


def auc(positive: F32, negative: F32) -> float:
    """P(a positive pair scores above a negative one), ties counting half."""
    if not len(positive) or not len(negative):
        return float("nan")
    negative = np.sort(negative)
    below = np.searchsorted(negative, positive, side="left")
    tied = np.searchsorted(negative, positive, side="right") - below
    return float((below + 0.5 * tied).sum() / (len(positive) * len(negative)))


def measure(
    name: str,
    korean: tuple[list[str], list[Pair], list[Pair]],
    conala: list[Pair],
    speed_texts: dict[str, list[str]],
    cache: Path | None,
) -> Result:
    result = Result(name, size_mb=package_size_mb(PACKAGES[name]))
    clear_shared_embedders()
    start = time.perf_counter()
    embedder = create_embedder(name, Settings())
    embedder.embed(["warm up"])
    result.load_s = time.perf_counter() - start
    result.speed = {lang: texts_per_second(embedder, t) for lang, t in speed_texts.items()}

    corpus, queries, pairs = korean
    index = {text: i for i, text in enumerate(corpus)}
    vectors = cached_vectors(embedder, corpus, cache)
    result.retrieval = retrieval(vectors, index, queries)
    cosines = pair_cosines(vectors, index, pairs)
    same = np.array([p.same for p in pairs])
    result.korean_auc = auc(cosines[same], cosines[~same])

    conala_texts = sorted({t for p in conala for t in (p.q1, p.q2)})
    conala_index = {text: i for i, text in enumerate(conala_texts)}
    conala_cos = pair_cosines(cached_vectors(embedder, conala_texts, cache), conala_index, conala)
    positive = np.array([p.kind == "positive" for p in conala])
    result.conala_auc = auc(conala_cos[positive], conala_cos[~positive])
    result.conala_gap = float(conala_cos[positive].mean() - conala_cos[~positive].mean())
    return result


# -- report ------------------------------------------------------------------------------


def table(results: list[Result]) -> Iterator[str]:
    columns: list[tuple[str, Callable[[Result], str]]] = [
        ("embedder", lambda r: r.name),
        ("R@1", lambda r: f"{r.retrieval['r@1']:.3f}"),
        ("R@5", lambda r: f"{r.retrieval['r@5']:.3f}"),
        ("R@10", lambda r: f"{r.retrieval['r@10']:.3f}"),
        ("MRR", lambda r: f"{r.retrieval['mrr']:.3f}"),
        ("ko pair AUC", lambda r: f"{r.korean_auc:.3f}"),
        ("en hard-neg AUC", lambda r: f"{r.conala_auc:.3f}"),
        ("en cos gap", lambda r: f"{r.conala_gap:.3f}"),
        ("ko texts/s", lambda r: f"{r.speed['ko']:.0f}"),
        ("en texts/s", lambda r: f"{r.speed['en']:.0f}"),
        ("load s", lambda r: f"{r.load_s:.2f}"),
        ("size MB", lambda r: f"{r.size_mb:.0f}"),
    ]
    cells = [[title for title, _ in columns]] + [[cell(r) for _, cell in columns] for r in results]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for n, row in enumerate(cells):
        yield "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        if n == 0:
            yield "|" + "|".join("-" * (w + 2) for w in widths) + "|"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--limit", type=int, help="read only the first N Korean pairs")
    parser.add_argument("--conala", type=int, default=400, help="CoNaLa pairs per kind")
    parser.add_argument("--speed-sample", type=int, default=256, help="texts per language")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/codeweaver-bench-korean"))
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()

    korean = korean_task(args.data, args.limit)
    conala = conala_sample(args.data, args.conala)
    rng = random.Random(1)
    english = sorted({t for p in load_pairs(args.data / CONALA) for t in (p.q1, p.q2)})
    speed_texts = {
        "ko": rng.sample(korean[0], min(args.speed_sample, len(korean[0]))),
        "en": rng.sample(english, min(args.speed_sample, len(english))),
    }
    corpus, queries, pairs = korean
    print(
        f"Korean: {len(pairs)} pairs, {len(corpus)} distinct questions, {len(queries)} "
        f"duplicate pairs searched (identical ones skipped); CoNaLa: {len(conala)} pairs"
    )
    results = []
    for name in (n.strip() for n in args.embedders.split(",") if n.strip()):
        start = time.perf_counter()
        results.append(
            measure(name, korean, conala, speed_texts, None if args.no_cache else args.cache_dir)
        )
        print(f"  {name}: {time.perf_counter() - start:.0f} s")
    print()
    for line in table(results):
        print(line)
    base = next((r for r in results if r.name == "minilm"), None)
    if base is not None:
        print()
        for r in results:
            if r is not base:
                gain = r.retrieval["r@1"] - base.retrieval["r@1"]
                verdict = "meets" if gain >= BAR else "misses"
                print(f"{r.name}: recall@1 {gain:+.3f} over minilm ({verdict} the +{BAR} bar)")


if __name__ == "__main__":
    main()
