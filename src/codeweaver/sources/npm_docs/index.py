"""Build, cache, load and query the BM25 index of a project's npm docs.

Cache layout: `<cache_dir>/npm_docs/<node_modules key>/<fingerprint[:32]>/` holds
`manifest.json` (written last), `entries.jsonl`, `packages.json` (each package's version,
URL and licence) and `bm25/` (bm25s arrays, no pickle). The fingerprint covers the
(name, version) pairs of the packages and the reading caps, so the index is rebuilt only
when node_modules changes. A build goes to a `.tmp-*` folder renamed into place; the
project's older indexes are then removed.

Scores: BM25 (bm25s' Lucene variant, k1 1.0, b 0.4 as the installed docs) mapped into
[0, 1) by `normalise_score`. A word matched once in an entry of average length adds about
half its idf (Lucene's BM25 has no `k1 + 1` factor), a name word repeated adds more; so the
score is 0.5 where the entry's BM25 reaches `SCORE_HALF_POINT` (0.3) of the question's idf
mass, e.g. by matching words worth 60 % of it once. Only entries scoring at least
`MIN_SCORE` (0.5) and holding words worth `MIN_COVERAGE` (60 %) of the question's idf mass
are returned (a name's word repeated scores high alone): a question the packages' docs do
not answer gets nothing rather than an entry sharing a word or two with it.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bm25s

from codeweaver.sources.index_files import (
    PrecisionFirstBm25,
    open_or_build,
)
from codeweaver.sources.npm_docs.collect import collect
from codeweaver.sources.npm_docs.model import (
    NpmEntry,
    NpmOptions,
    Package,
    PackageMeta,
    ProgressCallback,
)
from codeweaver.sources.npm_docs.tokens import entry_tokens, query_tokens

logger = logging.getLogger(__name__)
# bm25s sets its own logger to DEBUG on import, which would print index internals.
logging.getLogger("bm25s").setLevel(logging.WARNING)

FORMAT_VERSION = 1
BM25_K1 = 1.0
BM25_B = 0.4
SCORE_HALF_POINT = 0.3
#: Precision before recall: about 60 % of the question's idf mass matched (see above)...
MIN_SCORE = 0.5
#: ... and its words worth at least 60 % of that mass present, however often.
MIN_COVERAGE = 0.6
#: Without the bars: any score above zero (an entry sharing no word with the question
#: scores 0 and is no result, even unranked).
ANY_MATCH = 1e-9
MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
PACKAGES = "packages.json"
BM25_DIR = "bm25"


class IndexLoadError(RuntimeError):
    """The cached index is missing pieces, stale or unreadable."""


@dataclass(frozen=True)
class IndexInfo:
    fingerprint: str
    entry_count: int
    built_at: datetime
    path: Path
    seconds: float = 0.0  # how long the build took (0 when loaded from the cache)


class NpmIndex:
    """An index in memory: entries aligned with the BM25 retriever (None when empty)."""

    def __init__(
        self,
        info: IndexInfo,
        entries: list[NpmEntry],
        packages: dict[str, PackageMeta],
        retriever: Any | None,
    ) -> None:
        self.info = info
        self.entries = entries
        self.packages = packages
        self.retriever = retriever
        self._matcher = (
            PrecisionFirstBm25(
                retriever,
                len(entries),
                half_point=SCORE_HALF_POINT,
                min_score=MIN_SCORE,
                min_coverage=MIN_COVERAGE,
            )
            if retriever is not None
            else None
        )
        # The same scores without the bars, for a caller that judges relevance itself.
        self._unbarred = (
            PrecisionFirstBm25(
                retriever,
                len(entries),
                half_point=SCORE_HALF_POINT,
                min_score=ANY_MATCH,
                min_coverage=0.0,
            )
            if retriever is not None
            else None
        )

    def query(
        self, text: str, limit: int, min_score: float = MIN_SCORE, *, bar: bool = True
    ) -> list[tuple[NpmEntry, float]]:
        """Up to `limit` (entry, score in [0, 1)) that score at least `min_score` and hold
        words worth `MIN_COVERAGE` of the question's idf mass, best first; `bar=False`:
        every entry sharing a word with the question, best first."""
        matcher = self._matcher if bar else self._unbarred
        if matcher is None:
            return []
        plain, extra = query_tokens(text)
        found = matcher.matches(plain, extra, limit, min_score if bar else ANY_MATCH)
        return [(self.entries[i], score) for i, score in found]


# --------------------------------------------------------------------------- build / load


def build_index(
    packages: list[Package],
    node_modules: Path,
    options: NpmOptions,
    target: Path,
    fingerprint: str,
    progress: ProgressCallback | None = None,
) -> IndexInfo:
    """Read every package and write a complete index into the (new) folder `target`."""
    started = time.perf_counter()
    metas, entries = collect(packages, node_modules, options, progress)
    target.mkdir(parents=True, exist_ok=False)
    if entries:
        corpus: list[list[str]] = []
        step = max(1, len(entries) // 100)
        for done, entry in enumerate(entries, 1):
            corpus.append(entry_tokens(entry) or [entry.name.lower()])
            if progress is not None and (done % step == 0 or done == len(entries)):
                progress("Tokenising npm docs", done, len(entries))
        _report(progress, "Building the npm docs index", 0)
        retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        retriever.index(corpus, show_progress=False)
        retriever.save(str(target / BM25_DIR), show_progress=False)
        _report(progress, "Building the npm docs index", 1)
    with (target / ENTRIES).open("w", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
    (target / PACKAGES).write_text(
        json.dumps([m.to_dict() for m in metas], ensure_ascii=False), encoding="utf-8"
    )
    built_at = datetime.now(UTC)
    manifest = {
        "format": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "entry_count": len(entries),
        "package_count": len(metas),
        "built_at": built_at.isoformat(),
        "node_modules": str(node_modules),
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    seconds = time.perf_counter() - started
    logger.info("built the npm docs index: %d entries of %d packages in %.1f s",
                len(entries), len(metas), seconds)  # fmt: skip
    return IndexInfo(fingerprint, len(entries), built_at, target, seconds)


def _report(progress: ProgressCallback | None, phase: str, done: int) -> None:
    if progress is not None:
        progress(phase, done, 1)


def load_index(path: Path, fingerprint: str) -> NpmIndex:
    """A cached index; `IndexLoadError` if anything is missing, stale or unreadable."""
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION or manifest.get("fingerprint") != fingerprint:
            raise IndexLoadError(f"index at {path} is for other packages")
        count = int(manifest["entry_count"])
        with (path / ENTRIES).open(encoding="utf-8") as handle:
            entries = [NpmEntry.from_dict(json.loads(line)) for line in handle if line.strip()]
        metas = [PackageMeta.from_dict(m) for m in json.loads((path / PACKAGES).read_text("utf-8"))]
        retriever = None
        if entries:
            retriever = bm25s.BM25.load(
                str(path / BM25_DIR), load_corpus=False, show_progress=False
            )
            if int(retriever.scores["num_docs"]) != len(entries):
                raise IndexLoadError(f"index at {path} does not match its entries")
        if count != len(entries):
            raise IndexLoadError(f"index at {path} has {len(entries)} entries, expected {count}")
        built_at = datetime.fromisoformat(manifest["built_at"])
    except IndexLoadError:
        raise
    except Exception as exc:  # truncated arrays, bad JSON, missing files...
        raise IndexLoadError(f"cannot load the npm docs index at {path}: {exc}") from exc
    info = IndexInfo(fingerprint, count, built_at, path)
    return NpmIndex(info, entries, {m.name: m for m in metas}, retriever)


def open_index(
    index_dir: Path,
    packages: list[Package],
    node_modules: Path,
    options: NpmOptions,
    fingerprint: str,
    progress: ProgressCallback | None = None,
) -> NpmIndex:
    """The cached index of `fingerprint`, built first when missing or unreadable."""
    loaded, built = open_or_build(
        index_dir,
        fingerprint,
        manifest=MANIFEST,
        load=lambda path: load_index(path, fingerprint),
        build=lambda tmp: build_index(packages, node_modules, options, tmp, fingerprint, progress),
        load_error=IndexLoadError,
        what="npm docs",
    )
    if built is not None:
        loaded.info = IndexInfo(
            fingerprint, built.entry_count, built.built_at, loaded.info.path, built.seconds
        )
    return loaded
