"""Dense vectors of the doc entries, stored beside the BM25 index of the same fingerprint.

Each entry is embedded once (all-MiniLM-L6-v2 by default) as its name and the first prose
sentence of its docstring (`embedding_text`): the summary line says what an API does in the
words a question uses, and short texts keep the one-time cost to minutes on two cores.
Builtins read as Python spells them (`str.join (built-in method)`); doctest lines and
`name(args) -> type` lines are code, not a summary (`zip` starts with an example), and a
signature ending in a sentence (`D.update(...) -> None.  Update D from dict/iterable E and F.`)
gives that sentence.

Files in the index folder: `vectors.npy` (float32, one unit row per entry, in entry order,
`allow_pickle=False`) and `vectors.json` (fingerprint, embedder, count, dimension, format),
written after the array, each through a temporary file and an atomic rename. A file that is
missing, written for another fingerprint, embedder or format, or unreadable is rebuilt.

Installing one package changes the fingerprint, and the new index must not cost minutes of
embedding again: the last vectors built are also kept in the parent folder
(`.embedding-cache-<embedder>.npy`, with the SHA-1 of each row's text in the `.json`), and a
rebuild embeds only the texts that are not in it. The cache is keyed by text, so it stays
valid when `embedding_text` changes (`CACHE_FORMAT`, not `VECTORS_FORMAT`).

Each environment keeps its own cache beside its indexes (a project environment's in
`<index dir>/envs/<key>/`, see `project`), so building one never evicts another's texts. A
project environment's build also reads CodeWeaver's own cache (`<index dir>`): the stdlib
and the packages both environments share are then not embedded again.

Embedding all the entries takes minutes on two cores, and a process may stop half way (a
one-shot `ask`, Ctrl-C): the cache is saved every `CHECKPOINT_SECONDS` during a build, so
the next build starts where this one stopped. One process builds a folder's vectors at a
time (`BuildLock`, a lock file the system releases when the process ends); the others
search without vectors meanwhile and read its progress (`read_progress`, with an estimate).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from codeweaver.embeddings.base import Embedder, Vectors
from codeweaver.sources.installed_docs.embedding_text import embedding_text as embedding_text
from codeweaver.sources.installed_docs.model import ENVS_DIR, DocEntry, ProgressCallback

logger = logging.getLogger(__name__)
# What every door shows of long work (terminal, plain logs, `serve`'s log).
progress_log = logging.getLogger("codeweaver.progress")

VECTORS = "vectors.npy"
VECTORS_META = "vectors.json"
PROGRESS = "vectors-progress.json"
LOCK = ".vectors.lock"
CHECKPOINT_SECONDS = 20.0
# The most called fifth of the entries is embedded first, and searches use the vectors once
# it is: on CoNaLa (odd half) vectors for those alone find as much as vectors for all
# (recall@5 0.241 with 9,241 of 46,653 entries, 0.240 with all, 0.132 with none;
# `codeweaver_eval.bench.docs_vectors_subset`), so the wait for better search is a fifth
# of the build.
PRIORITY_SHARE = 0.2
VECTORS_FORMAT = 2  # 2: `embedding_text` skips code lines, builtins named as Python spells them
CACHE_FORMAT = 1
EMBEDDER = "minilm"
PHASE = "Embedding documents"
# Small batches: an answer that starts meanwhile waits for one (a few tenths of a second).
_BATCH = 32


def _meta(fingerprint: str, embedder: str, count: int, dimension: int) -> dict[str, object]:
    return {
        "format": VECTORS_FORMAT,
        "fingerprint": fingerprint,
        "embedder": embedder,
        "count": count,
        "dimension": dimension,
    }


def load_vectors(
    folder: Path, fingerprint: str, embedder: str, count: int, dimension: int
) -> Vectors | None:
    """The stored vectors, or None when missing, stale or unreadable (then rebuild them)."""
    try:
        meta = json.loads((folder / VECTORS_META).read_text(encoding="utf-8"))
        if meta != _meta(fingerprint, embedder, count, dimension):
            logger.info("installed-docs vectors in %s are stale", folder)
            return None
        array = np.load(folder / VECTORS, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # truncated or corrupt files
        logger.warning("cannot read installed-docs vectors in %s: %s", folder, exc)
        return None
    if array.shape != (count, dimension) or array.dtype != np.float32:
        logger.warning("installed-docs vectors in %s have shape %s", folder, array.shape)
        return None
    out: Vectors = array
    return out


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:20]


def _cache_paths(index_dir: Path, embedder: str) -> tuple[Path, Path]:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", embedder)
    return index_dir / f".embedding-cache-{stem}.npy", index_dir / f".embedding-cache-{stem}.json"


def _load_cache(index_dir: Path, embedder: Embedder) -> dict[str, Vectors]:
    """Text digest -> vector of the last set built in `index_dir` (empty if none/unusable)."""
    array_path, keys_path = _cache_paths(index_dir, embedder.name)
    try:
        meta = json.loads(keys_path.read_text(encoding="utf-8"))
        array = np.load(array_path, allow_pickle=False)
        keys = meta["keys"]
        if (
            meta.get("format") != CACHE_FORMAT
            or array.dtype != np.float32
            or array.shape != (len(keys), embedder.dimension)
        ):
            return {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {key: array[row] for row, key in enumerate(keys)}


def known_vectors(folder: Path, embedder: Embedder) -> dict[str, Vectors]:
    """The caches an index in `folder` may reuse: its environment's own, and for a project
    environment's index (`<root>/envs/<key>/<fingerprint>`) also the one in `<root>`."""
    env_dir = folder.parent
    known: dict[str, Vectors] = {}
    if env_dir.parent.name == ENVS_DIR:
        known.update(_load_cache(env_dir.parent.parent, embedder))
    known.update(_load_cache(env_dir, embedder))
    return known


def _save_cache(index_dir: Path, embedder: Embedder, keys: list[str], vectors: Vectors) -> None:
    array_path, keys_path = _cache_paths(index_dir, embedder.name)
    keys_path.unlink(missing_ok=True)
    _write_atomic(array_path, vectors)
    meta = {"format": CACHE_FORMAT, "keys": keys}
    _write_atomic(keys_path, json.dumps(meta).encode())


#: Called during a build with the digests and vectors of the rows made so far.
Checkpoint = Callable[[list[str], Vectors], None]


def popular_rows(entries: Sequence[DocEntry], calls: dict[str, int]) -> list[int]:
    """The rows embedded first: entries whose leaf name installed code calls more often
    than that of all but `PRIORITY_SHARE` of the (non-topic) entries."""
    leaves = [entry.name.rpartition(".")[2] for entry in entries]
    counts = sorted(
        (calls.get(leaf, 0) for entry, leaf in zip(entries, leaves, strict=True)
         if entry.kind != "topic"),
        reverse=True,
    )  # fmt: skip
    if not counts:
        return []
    bar = counts[int(len(counts) * PRIORITY_SHARE)] if len(counts) > 1 else 0
    return [row for row, leaf in enumerate(leaves) if calls.get(leaf, 0) > bar]


def text_keys(entries: Sequence[DocEntry]) -> list[str]:
    """Each entry's key in the embedding cache (the digest of its `embedding_text`)."""
    return [_digest(embedding_text(entry)) for entry in entries]


def missing_texts(entries: Sequence[DocEntry], known: dict[str, Vectors]) -> int:
    """How many entries' texts `known` lacks: what a build would embed."""
    return sum(_digest(embedding_text(e)) not in known for e in entries)


def embed_entries(
    entries: Sequence[DocEntry],
    embedder: Embedder,
    progress: ProgressCallback | None = None,
    known: dict[str, Vectors] | None = None,
    checkpoint: Checkpoint | None = None,
    step: Callable[[], AbstractContextManager[object]] | None = None,
    first: Sequence[int] = (),
) -> tuple[list[str], Vectors]:
    """(text digests, unit vectors) of every entry; texts found in `known` are not embedded
    again. The rows in `first` are embedded before the others, and `checkpoint` gets the
    rows made so far as soon as those are done, then every `CHECKPOINT_SECONDS`. Progress
    counts entries, reused ones at once; each batch is embedded inside `step()`
    (background work: never while a model computes an answer)."""
    texts = [embedding_text(e) for e in entries]
    keys = [_digest(t) for t in texts]
    out = np.zeros((len(entries), embedder.dimension), dtype=np.float32)
    todo: list[int] = []
    for row, key in enumerate(keys):
        if known is not None and key in known:
            out[row] = known[key]
        else:
            todo.append(row)
    wanted = set(first)
    todo = [row for row in todo if row in wanted] + [row for row in todo if row not in wanted]
    first_left = sum(row in wanted for row in todo)
    done = len(entries) - len(todo)
    if progress is not None:
        progress(PHASE, done, len(entries))
    saved_at = began = time.monotonic()
    for start in range(0, len(todo), _BATCH):
        rows = todo[start : start + _BATCH]
        with step() if step is not None else contextlib.nullcontext():
            out[rows] = embedder.embed([texts[i] for i in rows])
        done += len(rows)
        if progress is not None:
            progress(PHASE, done, len(entries))
        last = start + _BATCH >= len(todo)
        first_done = 0 < first_left <= start + _BATCH
        if first_done:
            progress_log.info(
                "docs vectors: the %d most called entries embedded in %.0f s; searches use "
                "them while the others are embedded",
                first_left, time.monotonic() - began,
            )  # fmt: skip
            first_left = 0
        due = first_done or time.monotonic() - saved_at > CHECKPOINT_SECONDS
        if checkpoint is not None and not last and due:
            made = sorted({*range(len(entries))} - set(todo[start + _BATCH :]))
            checkpoint([keys[i] for i in made], out[made])
            saved_at = time.monotonic()
    return keys, out


def _write_atomic(path: Path, write: bytes | Vectors) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("wb") as handle:
            if isinstance(write, bytes):
                handle.write(write)
            else:
                np.save(handle, write, allow_pickle=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def build_vectors(
    folder: Path,
    entries: Sequence[DocEntry],
    fingerprint: str,
    embedder: Embedder,
    progress: ProgressCallback | None = None,
    popularity: dict[str, int] | None = None,
) -> Vectors:
    """Embed the entries, the most called first (`popular_rows` of `popularity`), reusing
    the last set built beside `folder` and saving it as it grows, then store them in
    `folder` (the array first, then its metadata). The caller holds its `BuildLock`."""
    known = known_vectors(folder, embedder)
    started = time.time()
    missing = missing_texts(entries, known)
    done_before = len(entries) - missing

    def report(phase: str, done: int, total: int) -> None:
        write_progress(folder, done - done_before, missing, started)
        if progress is not None:
            progress(phase, done, total)

    def checkpoint(keys: list[str], vectors: Vectors) -> None:
        try:
            _save_cache(folder.parent, embedder, keys, vectors)
        except OSError as exc:
            logger.info("cannot save the embedding cache in %s: %s", folder.parent, exc)

    from codeweaver.llm.busy import background_step

    first = popular_rows(entries, popularity or {})
    keys, vectors = embed_entries(
        entries, embedder, report, known, checkpoint, background_step, first
    )
    logger.info("embedded doc entries: %d reused of %d", len(known.keys() & set(keys)), len(keys))
    try:
        (folder / VECTORS_META).unlink(missing_ok=True)
        _write_atomic(folder / VECTORS, vectors)
        meta = _meta(fingerprint, embedder.name, len(entries), embedder.dimension)
        _write_atomic(folder / VECTORS_META, json.dumps(meta).encode())
        _save_cache(folder.parent, embedder, keys, vectors)
    except OSError as exc:  # a read-only cache still searches, with the vectors in memory
        logger.warning("cannot store installed-docs vectors in %s: %s", folder, exc)
    (folder / PROGRESS).unlink(missing_ok=True)
    return vectors


# --------------------------------------------------------------------------- one builder


class BuildLock:
    """The right to build one folder's vectors, held across processes (a lock file the
    system frees when its process ends, however it ends)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK
        self._handle: IO[str] | None = None

    def acquire(self, blocking: bool) -> bool:
        import portalocker

        handle = self.path.open("a")
        flags = portalocker.LockFlags.EXCLUSIVE
        if not blocking:
            flags |= portalocker.LockFlags.NON_BLOCKING
        try:
            portalocker.lock(handle, flags)
        except portalocker.exceptions.LockException:
            handle.close()
            return False
        self._handle = handle
        return True

    def release(self) -> None:
        import portalocker

        if self._handle is not None:
            portalocker.unlock(self._handle)
            self._handle.close()
            self._handle = None


@dataclass(frozen=True)
class BuildProgress:
    """How far a build of vectors is: texts embedded of those missing, and when it began."""

    done: int
    total: int
    started: float  # time.time()
    updated: float
    pid: int

    def eta_seconds(self) -> float | None:
        """Seconds left at the rate so far (None before there is a rate)."""
        elapsed = self.updated - self.started
        if self.done <= 0 or elapsed <= 0:
            return None
        return (self.total - self.done) * elapsed / self.done


def write_progress(folder: Path, done: int, total: int, started: float) -> None:
    """Record a build's progress beside its index (for other processes; best effort)."""
    record: dict[str, Any] = {
        "done": done, "total": total, "started": started, "updated": time.time(),
        "pid": os.getpid(),
    }  # fmt: skip
    with contextlib.suppress(OSError):
        _write_atomic(folder / PROGRESS, json.dumps(record).encode())


def read_progress(folder: Path) -> BuildProgress | None:
    """The progress a build (in any process) last recorded in `folder`, if any."""
    try:
        record = json.loads((folder / PROGRESS).read_text(encoding="utf-8"))
        return BuildProgress(
            int(record["done"]), int(record["total"]), float(record["started"]),
            float(record["updated"]), int(record["pid"]),
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None
