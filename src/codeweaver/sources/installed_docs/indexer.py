"""Build, cache, load and query the BM25 index of doc entries (tokens: see `tokenizer`).

Cache layout (`index_dir`): one folder per fingerprint, named by its first 32 hex digits::

    <fingerprint[:32]>/manifest.json   fingerprint, format, entry count, build time (written last)
    <fingerprint[:32]>/entries.jsonl   one DocEntry per line (JSON, never pickle)
    <fingerprint[:32]>/bm25/           the bm25s arrays (.npy, allow_pickle=False) and vocabulary
    <fingerprint[:32]>/popularity.json calls of each leaf name in the installed code

A build goes to a `.tmp-*` folder first and is renamed into place, so readers only ever see
complete indexes; folders of other fingerprints in the same `index_dir` are then removed.
Only fingerprint folders and build leftovers are removed: the sub-folders of project
environments (`envs/`, each an `index_dir` of its own, see `project`) and the parse cache
stay.

Scores are multiplied by a prior (`entry_weight`): deprecated stdlib modules x0.5, builtins
x1.3; then mapped into [0, 1) by `normalise_score`.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from codeweaver.sources.index_files import (
    idf_sum,
    normalise_score,
    remove_other_indexes,
    replace_index,
)
from codeweaver.sources.installed_docs.collect import (
    CollectorOptions,
    DocEntry,
    ProgressCallback,
    collect_entries,
    list_distributions,
)
from codeweaver.sources.installed_docs.popularity import count_calls
from codeweaver.sources.installed_docs.tokenizer import entry_tokens, query_tokens, tokenize

logger = logging.getLogger(__name__)
# bm25s forces its own logger to DEBUG on import, which would print index internals.
logging.getLogger("bm25s").setLevel(logging.WARNING)

#: 4: docstrings written at import time (`made_docs`: `pandas.read_csv` 2.2, `numpy.zeros`)
#: and members published under the classes that inherit them (`DataFrame.to_csv`).
FORMAT_VERSION = 4
BM25_K1 = 1.0
BM25_B = 0.4
SCORE_HALF_POINT = 0.6
MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
BM25_DIR = "bm25"
POPULARITY = "popularity.json"


class IndexLoadError(RuntimeError):
    """The cached index is missing pieces or unreadable."""


@dataclass(frozen=True)
class IndexInfo:
    fingerprint: str
    entry_count: int
    built_at: datetime
    path: Path


# --------------------------------------------------------------------------- ranking prior


#: Deprecated (PEP 594, distutils, lib2to3...) stdlib modules: their scores are halved.
_DEPRECATED = frozenset(
    {"aifc", "asynchat", "asyncore", "audioop", "cgi", "cgitb", "chunk", "crypt", "distutils",
     "imghdr", "imp", "lib2to3", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes",
     "smtpd", "sndhdr", "spwd", "sre_compile", "sre_constants", "sre_parse", "sunau",
     "telnetlib", "uu", "xdrlib", "tkinter.tix"}
)  # fmt: skip
DEPRECATED_WEIGHT = 0.5
BUILTINS_WEIGHT = 1.3


def entry_weight(entry: DocEntry) -> float:
    """Prior multiplied into the BM25 score: deprecated stdlib modules down, builtins up."""
    if entry.package != "python" or not entry.module:
        return 1.0
    if entry.module == "builtins":
        return BUILTINS_WEIGHT
    parts = entry.module.split(".")
    if parts[0] in _DEPRECATED or ".".join(parts[:2]) in _DEPRECATED:
        return DEPRECATED_WEIGHT
    return 1.0


# --------------------------------------------------------------------------- fingerprint


def indexed_python(options: CollectorOptions) -> str:
    """`sys.version` of the Python whose docs the options select (a project's, or ours)."""
    return options.python.sys_version if options.python is not None else sys.version


def compute_fingerprint(options: CollectorOptions) -> str:
    """sha256 over the Python version, sorted (distribution, version) pairs and the options."""
    material = {
        "format": FORMAT_VERSION,
        "python": indexed_python(options),
        "dists": sorted([d.canonical, d.version] for d in list_distributions(options)),
        "options": options.key(),
    }
    return sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------- build / load


class LoadedIndex:
    """An index in memory: the BM25 retriever and the entries, aligned by position."""

    def __init__(
        self,
        info: IndexInfo,
        retriever: Any,
        entries: list[DocEntry],
        popularity: dict[str, int] | None = None,
    ) -> None:
        self.info = info
        self.retriever = retriever
        self.entries = entries
        self.popularity = popularity or {}
        self._vocab: dict[str, int] = retriever.vocab_dict
        self._weights = np.array([entry_weight(e) for e in entries], dtype=np.float32)

    def scores(self, text: str) -> tuple[np.ndarray, float]:
        """Weighted BM25 score of every entry and the query's `normalise_score` half point
        (all zeros when no query word is in the vocabulary)."""
        asked = query_tokens(text)
        tokens = [t for t in asked if t in self._vocab]
        if not tokens or not self.entries:
            return np.zeros(len(self.entries)), 1.0
        scores = np.asarray(
            self.retriever.get_scores(tokens, weight_mask=self._weights), dtype=np.float64
        )
        plain = set(tokenize(text))
        # Words the docs never mention still count: a query about "CORS" must not score
        # well on documents that only match its other words.
        core = [t for t in asked if t in plain or t.startswith("@")]
        return scores, SCORE_HALF_POINT * (self._idf_sum(core) or self._idf_sum(tokens))

    def query(self, text: str, limit: int) -> list[tuple[DocEntry, float, float]]:
        """Up to `limit` (entry, raw BM25 score, score in [0, 1)), best first."""
        if limit <= 0 or not self.entries:
            return []
        scores, half = self.scores(text)
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [
            (self.entries[i], float(scores[i]), normalise_score(float(scores[i]), half))
            for i in top
            if scores[i] > 0
        ]

    def _idf_sum(self, tokens: Iterable[str]) -> float:
        return idf_sum(self.retriever, self._vocab, len(self.entries), tokens)


# `normalise_score`'s half point here is `SCORE_HALF_POINT` (0.6) times the summed idf of
# the query's words (plain stemmed words and `@for`-style keyword tokens, not the
# expansions). Matching every query word once in a text of average length scores about
# that idf sum (-> ~0.62); matching them in the (boosted) name or repeatedly goes higher;
# a document matching words worth less than 60 % of the query's idf mass stays below 0.5.


def build_index(
    options: CollectorOptions,
    target: Path,
    fingerprint: str,
    progress: ProgressCallback | None = None,
    parsed_dir: Path | None = None,
) -> IndexInfo:
    """Collect entries (reusing `parsed_dir`'s parse cache) and write a complete index into
    the (new) folder `target`."""
    started = time.perf_counter()
    entries = collect_entries(options, progress, parsed_dir)
    if not entries:
        raise IndexLoadError("no documentation entries were found")
    corpus: list[list[str]] = []
    step = max(1, len(entries) // 100)
    for done, entry in enumerate(entries, 1):
        corpus.append(entry_tokens(entry) or [entry.name.lower()])
        if progress is not None and (done % step == 0 or done == len(entries)):
            progress("Tokenising documents", done, len(entries))
    _report(progress, "Building the BM25 index", 0)
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index(corpus, show_progress=False)
    _report(progress, "Building the BM25 index", 1)
    _report(progress, "Counting calls in the installed code", 0)
    popularity = count_calls(entries)
    _report(progress, "Counting calls in the installed code", 1)
    _report(progress, "Saving the index", 0)
    target.mkdir(parents=True, exist_ok=False)
    retriever.save(str(target / BM25_DIR), show_progress=False)
    (target / POPULARITY).write_text(json.dumps(popularity), encoding="utf-8")
    with (target / ENTRIES).open("w", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
    built_at = datetime.now(UTC)
    manifest = {
        "format": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "entry_count": len(entries),
        "built_at": built_at.isoformat(),
        "python": indexed_python(options),
        "options": options.key(),
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    _report(progress, "Saving the index", 1)
    logger.info(
        "built installed-docs index: %d entries in %.1f s", len(entries),
        time.perf_counter() - started,
    )  # fmt: skip
    return IndexInfo(fingerprint, len(entries), built_at, target)


def _report(progress: ProgressCallback | None, phase: str, done: int) -> None:
    if progress is not None:
        progress(phase, done, 1)


def load_index(path: Path, fingerprint: str) -> LoadedIndex:
    """Load a cached index; `IndexLoadError` if anything is missing, stale or unreadable."""
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION or manifest.get("fingerprint") != fingerprint:
            raise IndexLoadError(f"index at {path} is for another installation")
        count = int(manifest["entry_count"])
        with (path / ENTRIES).open(encoding="utf-8") as handle:
            entries = [DocEntry.from_dict(json.loads(line)) for line in handle if line.strip()]
        retriever = bm25s.BM25.load(str(path / BM25_DIR), load_corpus=False, show_progress=False)
        scores = retriever.scores
        n_docs = int(scores["num_docs"])
        indptr, indices, data = scores["indptr"], scores["indices"], scores["data"]
        if not (count == len(entries) == n_docs):
            raise IndexLoadError(f"index at {path} has {len(entries)} entries, expected {count}")
        if (
            len(indptr) - 1 < max(retriever.vocab_dict.values(), default=0)
            or len(indices) != len(data)
            or (len(indices) and int(indices.max()) >= n_docs)
        ):
            raise IndexLoadError(f"index arrays at {path} are inconsistent")
        built_at = datetime.fromisoformat(manifest["built_at"])
        popularity = json.loads((path / POPULARITY).read_text(encoding="utf-8"))
        if not isinstance(popularity, dict):
            raise IndexLoadError(f"{path / POPULARITY} is not a JSON object")
    except IndexLoadError:
        raise
    except Exception as exc:  # truncated .npy, bad JSON, missing files...
        raise IndexLoadError(f"cannot load index at {path}: {exc}") from exc
    counts = {str(k): int(v) for k, v in popularity.items()}
    return LoadedIndex(IndexInfo(fingerprint, count, built_at, path), retriever, entries, counts)


def index_path(index_dir: Path, fingerprint: str) -> Path:
    return index_dir / fingerprint[:32]


def open_index(
    index_dir: Path,
    options: CollectorOptions,
    progress: ProgressCallback | None = None,
    fingerprint: str | None = None,
    parsed_dir: Path | None = None,
) -> LoadedIndex:
    """Load the index for the current installation, building it first if missing or stale.

    A corrupted index is deleted and rebuilt once; if that fails too, `IndexLoadError` (or an
    `OSError`) propagates. `parsed_dir`: the parse cache a build reuses (`collect`).
    """
    fingerprint = fingerprint or compute_fingerprint(options)
    final = index_path(index_dir, fingerprint)
    if (final / MANIFEST).exists():
        try:
            return load_index(final, fingerprint)
        except IndexLoadError as exc:
            logger.warning("rebuilding the installed-docs index: %s", exc)
    index_dir.mkdir(parents=True, exist_ok=True)
    tmp = index_dir / f".tmp-{fingerprint[:12]}-{uuid.uuid4().hex[:8]}"
    try:
        build_index(options, tmp, fingerprint, progress, parsed_dir)
        replace_index(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    remove_other_indexes(index_dir, keep=final.name)
    return load_index(final, fingerprint)
