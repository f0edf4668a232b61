"""The dense half of the docs search: the embedder and the vectors of the loaded index.

Vectors are loaded from beside the index, or embedded when missing or stale: in the caller's
thread with progress when it asks to wait (`ensure_index`), otherwise in a background thread
at low CPU priority while searches go on without them (`prepare`, a search). Either way
they are embedded in small steps, never while a model computes an answer (`llm.busy`). One
process builds at a time (`vectors.BuildLock`): another one's thread waits for it, then
loads what it made; a build that stopped half way is resumed from its saved cache. An
embedder that cannot be created (weights not installed) leaves the search without vectors
and says why in `problem`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from codeweaver.embeddings.base import Embedder, Vectors
from codeweaver.sources.installed_docs.indexer import LoadedIndex
from codeweaver.sources.installed_docs.model import ProgressCallback
from codeweaver.sources.installed_docs.vectors import (
    EMBEDDER,
    PHASE,
    BuildLock,
    BuildProgress,
    build_vectors,
    known_vectors,
    load_vectors,
    popular_rows,
    read_progress,
    text_keys,
)

logger = logging.getLogger(__name__)
# How often a caller that waits for another builder reads its progress.
WAIT_POLL_SECONDS = 1.0
# How often a search looks in a build's checkpoint for the most called entries' vectors.
EARLY_POLL_SECONDS = 15.0


def default_embedder() -> Embedder:
    from codeweaver.config import Settings
    from codeweaver.embeddings import create_embedder

    return create_embedder(EMBEDDER, Settings())


@dataclass(frozen=True)
class VectorsState:
    """Where the vectors of the loaded index are: `ready`, `building` (here or in another
    process, with `progress`), `missing` (no build started yet), `failed` or `off`."""

    state: str
    progress: BuildProgress | None = None
    problem: str | None = None


def _low_priority() -> None:
    """This thread, and its BLAS work, yield the CPU to other work (low, not the lowest:
    an answer that starts during one of its steps waits for that step)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class DenseVectors:
    """Embedder and vectors for one source; thread-safe, builds at most one set at a time."""

    def __init__(
        self,
        factory: Callable[[], Embedder] | None = None,
        *,
        enabled: bool = True,
        retry_after: float = 300.0,
    ) -> None:
        self.enabled = enabled
        self.problem: str | None = None
        self._factory = factory or default_embedder
        self._retry_after = retry_after
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()  # held while embedding the entries
        self._state = threading.Lock()  # guards the fields below
        self._vectors: tuple[str, Vectors] | None = None  # (fingerprint, vectors)
        self._background: threading.Thread | None = None
        self._failed_at: float | None = None
        self._early: tuple[str, Vectors] | None = None  # (fingerprint, vectors so far)
        self._early_checked = -EARLY_POLL_SECONDS

    def embedder(self) -> Embedder | None:
        with self._state:
            if self._embedder is None and self.problem is None:
                try:
                    self._embedder = self._factory()
                except Exception as exc:  # missing weights or extra: search without vectors
                    logger.warning("installed_docs: no embedder for dense vectors: %s", exc)
                    self.problem = str(exc)
            return self._embedder

    def embed_query(self, text: str) -> Vectors:
        embedder = self.embedder()
        if embedder is None:  # unreachable: a ranker only has vectors with an embedder
            return np.zeros(0, dtype=np.float32)
        row: Vectors = embedder.embed([text])[0]
        return row

    def vectors_for(
        self, loaded: LoadedIndex, progress: ProgressCallback | None, *, wait: bool
    ) -> Vectors | None:
        """The vectors of `loaded`, or None while they are being (or cannot be) made."""
        if not self.enabled:
            return None
        fingerprint = loaded.info.fingerprint
        with self._state:
            if self._vectors is not None and self._vectors[0] == fingerprint:
                return self._vectors[1]
        embedder = self.embedder()
        if embedder is None:
            return None
        if wait:
            return self._locked_build(loaded, embedder, progress, low_priority=False)
        with self._state:
            recently_failed = (
                self._failed_at is not None
                and time.monotonic() - self._failed_at < self._retry_after
            )
            if (self._background and self._background.is_alive()) or recently_failed:
                return None
        stored = self._load(loaded, embedder)
        if stored is not None:
            return stored
        thread = threading.Thread(
            target=self._background_build,
            args=(loaded, embedder),
            name="installed-docs-vectors",
            daemon=True,
        )
        with self._state:
            if self._background and self._background.is_alive():
                return None
            self._background = thread
        thread.start()
        return None

    def early_vectors(self, loaded: LoadedIndex) -> Vectors | None:
        """While the vectors are being built (here or in another process): those made so
        far, read from the build's checkpoint once every most called entry
        (`popular_rows`, embedded first) has one; the other rows are zero (never a dense
        candidate). None before then, at most one look every `EARLY_POLL_SECONDS`."""
        fingerprint = loaded.info.fingerprint
        with self._state:
            embedder = self._embedder
            if self._early is not None and self._early[0] == fingerprint:
                return self._early[1]
            if embedder is None or time.monotonic() - self._early_checked < EARLY_POLL_SECONDS:
                return None
            self._early_checked = time.monotonic()
        known = known_vectors(loaded.info.path, embedder)
        if not known:
            return None
        keys = text_keys(loaded.entries)
        if any(keys[row] not in known for row in popular_rows(loaded.entries, loaded.popularity)):
            return None
        vectors = np.zeros((len(keys), embedder.dimension), dtype=np.float32)
        for row, key in enumerate(keys):
            if (found := known.get(key)) is not None:
                vectors[row] = found
        logger.info(
            "installed_docs: searching with the vectors of the most called entries while "
            "the others are embedded"
        )
        with self._state:
            self._early = (fingerprint, vectors)
        return vectors

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a background build (tests)."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)

    def state(self, loaded: LoadedIndex | None) -> VectorsState:
        """Where the vectors of `loaded` are (cheap: reads a small file at most)."""
        if not self.enabled:
            return VectorsState("off")
        if self.problem is not None:
            return VectorsState("failed", problem=self.problem)
        if loaded is None:
            return VectorsState("missing")
        with self._state:
            if self._vectors is not None and self._vectors[0] == loaded.info.fingerprint:
                return VectorsState("ready")
            building = self._background is not None and self._background.is_alive()
        found = read_progress(loaded.info.path)
        if found is not None and (building or alive(found.pid)):
            return VectorsState("building", found)
        return VectorsState("building" if building else "missing")

    def _load(self, loaded: LoadedIndex, embedder: Embedder) -> Vectors | None:
        info = loaded.info
        vectors = load_vectors(
            info.path, info.fingerprint, embedder.name, info.entry_count, embedder.dimension
        )
        if vectors is not None:
            with self._state:
                self._vectors = (info.fingerprint, vectors)
        return vectors

    def _load_or_build(
        self, loaded: LoadedIndex, embedder: Embedder, progress: ProgressCallback | None
    ) -> Vectors | None:
        with self._lock:
            stored = self._load(loaded, embedder)
            if stored is not None:
                return stored
            try:
                vectors = build_vectors(
                    loaded.info.path, loaded.entries, loaded.info.fingerprint, embedder,
                    progress, loaded.popularity,
                )  # fmt: skip
            except Exception as exc:  # the search goes on with BM25 and exact names
                logger.warning("installed_docs: cannot embed the doc entries", exc_info=True)
                with self._state:
                    self._failed_at = time.monotonic()
                    self.problem = f"cannot embed the doc entries: {exc}"
                return None
            with self._state:
                self._vectors = (loaded.info.fingerprint, vectors)
                self._failed_at = None
            return vectors

    def _locked_build(
        self,
        loaded: LoadedIndex,
        embedder: Embedder,
        progress: ProgressCallback | None,
        *,
        low_priority: bool,
    ) -> Vectors | None:
        """Load or build under the folder's `BuildLock`, waiting (with a word to `progress`)
        while another process holds it."""
        lock = BuildLock(loaded.info.path)
        try:
            if not lock.acquire(blocking=False):
                logger.info("installed_docs: another builder is embedding; waiting for it")
                if progress is None:
                    lock.acquire(blocking=True)
                else:  # show the other builder's progress meanwhile
                    while not lock.acquire(blocking=False):
                        if (found := read_progress(loaded.info.path)) is not None:
                            progress(PHASE, found.done, found.total)
                        time.sleep(WAIT_POLL_SECONDS)
        except OSError as exc:  # a read-only index folder: build in memory, unlocked
            logger.info("installed_docs: no build lock in %s: %s", loaded.info.path, exc)
        try:
            if low_priority:
                _low_priority()
            return self._load_or_build(loaded, embedder, progress)
        finally:
            lock.release()

    def _background_build(self, loaded: LoadedIndex, embedder: Embedder) -> None:
        from threadpoolctl import threadpool_limits

        # One BLAS thread: the work stays in this (low-priority) thread.
        with threadpool_limits(limits=1, user_api="blas"):
            self._locked_build(loaded, embedder, None, low_priority=True)


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a build record of a dead process is stale)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        return True
    return True
