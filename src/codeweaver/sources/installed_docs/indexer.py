"""Tokenise doc entries, build the BM25 index, cache it on disk and load it back.

Cache layout (`index_dir`): one folder per fingerprint, named by its first 32 hex digits::

    <fingerprint[:32]>/manifest.json   fingerprint, format, entry count, build time (written last)
    <fingerprint[:32]>/entries.jsonl   one DocEntry per line (JSON, never pickle)
    <fingerprint[:32]>/bm25/           the bm25s arrays (.npy, allow_pickle=False) and vocabulary

A build goes to a `.tmp-*` folder first and is renamed into place, so readers only ever see
complete indexes; folders of other fingerprints are then removed.

Tokenisation (same for documents and queries, kept deliberately simple):
  * words are runs of letters/digits/underscores, optionally dotted (`os.path.join`);
  * a dotted or underscored word is kept whole (lowercased) *and* split on `.`/`_`/camelCase
    (`TextIOBase` -> `text`, `io`, `base`), and a short list of API verbs/nouns splits glued
    names (`readline` -> `read`, `line`; `listdir` -> `list`, `dir`);
  * English stopwords (bm25s' `STOPWORDS_EN_PLUS` plus "python"/"please"...) are dropped;
  * an S-stemmer folds plurals (`lines` -> `line`, `entries` -> `entry`, `matches` -> `match`);
    name and query tokens keep the unstemmed form too, so exact names score higher;
  * names are boosted: the leaf name's tokens are repeated `NAME_BOOST` times, the rest of the
    qualified name (module, class) and aliases once.
"""

from __future__ import annotations

import json
import logging
import os
import re
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
from bm25s.stopwords import STOPWORDS_EN_PLUS

from codeweaver.sources.installed_docs.collect import (
    CollectorOptions,
    DocEntry,
    ProgressCallback,
    collect_entries,
    list_distributions,
)

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
NAME_BOOST = 3
MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
BM25_DIR = "bm25"

STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | {
    "python", "please", "would", "could", "also", "like", "want", "need", "way", "e.g", "i.e",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]{2,}")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PREFIXES = (
    "read", "write", "get", "set", "is", "has", "iter", "load", "dump", "make", "open", "close",
    "split", "join", "find", "start", "end", "add", "remove", "new", "list", "copy", "parse",
    "send", "recv", "file", "path", "base", "dir", "to", "from",
)  # fmt: skip
_SUFFIXES = (
    "lines", "line", "files", "file", "dirs", "dir", "name", "names", "path", "with", "attr",
    "items", "item", "size", "keys", "values", "all", "time",
)  # fmt: skip


class IndexLoadError(RuntimeError):
    """The cached index is missing pieces or unreadable."""


@dataclass(frozen=True)
class IndexInfo:
    fingerprint: str
    entry_count: int
    built_at: datetime
    path: Path


# --------------------------------------------------------------------------- tokenisation


def stem(word: str) -> str:
    """S-stemmer (Harman 1991, plus -ches/-shes/-sses/-xes): folds plural forms only."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


def _pieces(word: str) -> list[str]:
    """Lowercased sub-words of one identifier (or plain word)."""
    pieces: list[str] = []
    for part in re.split(r"[._]+", word):
        for piece in _CAMEL.findall(part):
            low = piece.lower()
            pieces.append(low)
            for prefix in _PREFIXES:
                if low.startswith(prefix) and len(low) - len(prefix) >= 3:
                    pieces += [prefix, low[len(prefix) :]]
                    break
            for suffix in _SUFFIXES:
                if low.endswith(suffix) and len(low) - len(suffix) >= 2:
                    pieces += [low[: -len(suffix)], suffix]
                    break
    return pieces


def tokenize(text: str, *, keep_unstemmed: bool = False) -> list[str]:
    """Tokens of free text (see the module docstring)."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        low = word.lower()
        if ("." in low or "_" in low.strip("_")) and len(low) > 2:
            tokens.append(low.strip("._"))
        for piece in _pieces(word):
            if len(piece) < 2 or piece in STOPWORDS:
                continue
            stemmed = stem(piece)
            tokens.append(stemmed)
            if keep_unstemmed and stemmed != piece:
                tokens.append(piece)
    return tokens


def query_tokens(query: str) -> list[str]:
    """Unique query tokens, in order (stemmed and unstemmed forms)."""
    return list(dict.fromkeys(tokenize(query, keep_unstemmed=True)))


def entry_tokens(entry: DocEntry) -> list[str]:
    """Document tokens: boosted names + signature + docstring."""
    container, _, leaf = entry.name.rpartition(".")
    tokens = tokenize(leaf, keep_unstemmed=True) * NAME_BOOST
    tokens.append(entry.name.lower())
    tokens += tokenize(container, keep_unstemmed=True)
    for alias in entry.aliases:
        tokens.append(alias.lower())
        tokens += tokenize(alias, keep_unstemmed=True)
    if entry.package != "python":
        tokens += tokenize(entry.package)
    tokens += tokenize(entry.signature)
    tokens += tokenize(entry.doc)
    return tokens


# --------------------------------------------------------------------------- fingerprint


def compute_fingerprint(options: CollectorOptions) -> str:
    """sha256 over the Python version, sorted (distribution, version) pairs and the options."""
    material = {
        "format": FORMAT_VERSION,
        "python": sys.version,
        "dists": sorted([d.canonical, d.version] for d in list_distributions(options)),
        "options": options.key(),
    }
    return sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------- build / load


class LoadedIndex:
    """An index in memory: the BM25 retriever and the entries, aligned by position."""

    def __init__(self, info: IndexInfo, retriever: Any, entries: list[DocEntry]) -> None:
        self.info = info
        self.retriever = retriever
        self.entries = entries
        self._vocab: dict[str, int] = retriever.vocab_dict

    def query(self, text: str, limit: int) -> list[tuple[DocEntry, float, int]]:
        """Up to `limit` (entry, raw BM25 score, matched query tokens), best first."""
        tokens = [t for t in query_tokens(text) if t in self._vocab]
        if not tokens or limit <= 0 or not self.entries:
            return []
        scores = np.asarray(self.retriever.get_scores(tokens), dtype=np.float64)
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.entries[i], float(scores[i]), len(tokens)) for i in top if scores[i] > 0]


def build_index(
    options: CollectorOptions,
    target: Path,
    fingerprint: str,
    progress: ProgressCallback | None = None,
) -> IndexInfo:
    """Collect entries and write a complete index into the (new) folder `target`."""
    started = time.perf_counter()
    entries = collect_entries(options, progress)
    if not entries:
        raise IndexLoadError("no documentation entries were found")
    corpus: list[list[str]] = []
    step = max(1, len(entries) // 100)
    for done, entry in enumerate(entries, 1):
        corpus.append(entry_tokens(entry) or [entry.name.lower()])
        if progress is not None and (done % step == 0 or done == len(entries)):
            progress("Tokenising documents", done, len(entries))
    _report(progress, "Building the BM25 index", 0)
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(corpus, show_progress=False)
    _report(progress, "Building the BM25 index", 1)
    _report(progress, "Saving the index", 0)
    target.mkdir(parents=True, exist_ok=False)
    retriever.save(str(target / BM25_DIR), show_progress=False)
    with (target / ENTRIES).open("w", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
    built_at = datetime.now(UTC)
    manifest = {
        "format": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "entry_count": len(entries),
        "built_at": built_at.isoformat(),
        "python": sys.version,
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
    except IndexLoadError:
        raise
    except Exception as exc:  # truncated .npy, bad JSON, missing files...
        raise IndexLoadError(f"cannot load index at {path}: {exc}") from exc
    return LoadedIndex(IndexInfo(fingerprint, count, built_at, path), retriever, entries)


def index_path(index_dir: Path, fingerprint: str) -> Path:
    return index_dir / fingerprint[:32]


def open_index(
    index_dir: Path,
    options: CollectorOptions,
    progress: ProgressCallback | None = None,
    fingerprint: str | None = None,
) -> LoadedIndex:
    """Load the index for the current installation, building it first if missing or stale.

    A corrupted index is deleted and rebuilt once; if that fails too, `IndexLoadError` (or an
    `OSError`) propagates.
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
        build_index(options, tmp, fingerprint, progress)
        _replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    _remove_others(index_dir, keep=final.name)
    return load_index(final, fingerprint)


def _replace(tmp: Path, final: Path) -> None:
    """Atomically move the new index into place (an old/corrupt one is moved aside first)."""
    trash: Path | None = None
    if final.exists():
        trash = final.with_name(f".old-{final.name[:12]}-{uuid.uuid4().hex[:8]}")
        os.replace(final, trash)
    os.replace(tmp, final)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def _remove_others(index_dir: Path, keep: str) -> None:
    """Delete indexes of other fingerprints and leftovers of crashed builds (> 1 hour old)."""
    now = time.time()
    for child in _children(index_dir):
        if child.name == keep or not child.is_dir():
            continue
        if child.name.startswith(".tmp-"):
            try:
                if now - child.stat().st_mtime < 3600:
                    continue  # maybe another process is building right now
            except OSError:
                continue
        shutil.rmtree(child, ignore_errors=True)


def _children(folder: Path) -> Iterable[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []
