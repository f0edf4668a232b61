"""The docs index never makes a run wait for its vectors: `prepare` returns with the BM25 index
ready, vectors are made in the background by one process at a time, a build that stops half
way is resumed, and a search that meets an index being built goes on without it."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from codeweaver.embeddings.base import Vectors
from codeweaver.sources.base import SourceError
from codeweaver.sources.installed_docs import CollectorOptions, InstalledDocsSource, indexer
from codeweaver.sources.installed_docs import dense as dense_module
from codeweaver.sources.installed_docs import vectors as vectors_module
from codeweaver.sources.installed_docs.vectors import (
    PROGRESS,
    VECTORS_META,
    BuildLock,
    read_progress,
)
from tests.unit.sources.installed_docs.test_installed_docs_hybrid import FakeEmbedder, options  # noqa: F401

QUESTION = "How to find duplicated rows in a pandas DataFrame"


class GatedEmbedder(FakeEmbedder):
    """Embeds only while its gate is open (a slow machine, made deterministic)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.calls = 0

    def embed(self, texts: list[str]) -> Vectors:
        self.calls += 1
        assert self.gate.wait(30), "the test never opened the gate"
        return super().embed(texts)


def source_with(
    index_dir: Path, collector: CollectorOptions, embedder: FakeEmbedder
) -> InstalledDocsSource:
    return InstalledDocsSource(index_dir, options=collector, embedder=lambda: embedder)


def test_prepare_returns_before_the_vectors_and_searches_meanwhile(
    tmp_path: Path,
    options: CollectorOptions,  # noqa: F811
) -> None:
    embedder = GatedEmbedder()
    source = source_with(tmp_path, options, embedder)
    started = time.monotonic()
    source.prepare()
    assert time.monotonic() - started < 20
    assert source.search_sync(QUESTION, 5)  # BM25 and exact names, no vectors yet
    line = source.building()
    assert line is not None and line.startswith("embedding the docs entries")
    embedder.gate.set()
    source._dense.wait(30)
    assert source.building() is None
    # The next search ranks with the vectors (the fake embedder's are not MiniLM's, which
    # the bar's estimate is fitted on: the ranked list is what is checked here).
    assert source.search_sync(QUESTION, 5, bar=False)
    assert source._ranker is not None and source._ranker.vectors is not None
    assert (source._loaded is not None) and (source._loaded.info.path / VECTORS_META).is_file()
    assert not (source._loaded.info.path / PROGRESS).exists()


def test_a_build_stopped_half_way_is_resumed(
    tmp_path: Path,
    options: CollectorOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors_module, "_BATCH", 2)
    monkeypatch.setattr(vectors_module, "CHECKPOINT_SECONDS", 0.0)

    class Failing(FakeEmbedder):
        def embed(self, texts: list[str]) -> Vectors:
            if self.texts >= 6:  # three batches, then the process "stops"
                raise KeyboardInterrupt
            return super().embed(texts)

    first = source_with(tmp_path, options, Failing())
    with pytest.raises(KeyboardInterrupt):
        first.ensure_index()
    loaded = first._loaded
    assert loaded is not None
    total = loaded.info.entry_count
    recorded = read_progress(loaded.info.path)
    assert recorded is not None and recorded.total == total and 0 < recorded.done < total

    second_embedder = FakeEmbedder()
    second = source_with(tmp_path, options, second_embedder)
    second.ensure_index()
    # The first build's checkpoints are kept: only the rest is embedded.
    assert 0 < second_embedder.texts <= total - 4
    assert second._ranker is not None and second._ranker.vectors is not None
    assert second._ranker.vectors.shape[0] == total


def test_a_second_process_waits_for_the_first_ones_vectors(
    tmp_path: Path,
    options: CollectorOptions,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    builder = source_with(tmp_path, options, FakeEmbedder())
    builder.prepare()
    builder._dense.wait(30)
    loaded = builder._loaded
    assert loaded is not None
    # "Another process" is embedding again: it holds the folder's lock, its files are gone.
    made = np.load(loaded.info.path / vectors_module.VECTORS)
    (loaded.info.path / VECTORS_META).unlink()
    other = BuildLock(loaded.info.path)
    assert other.acquire(blocking=False)
    vectors_module.write_progress(loaded.info.path, 3, 10, time.time() - 30)

    embedder = FakeEmbedder()
    waiting = source_with(tmp_path, options, embedder)
    caplog.set_level(logging.INFO, logger="codeweaver.sources.installed_docs")
    waiting.prepare()
    line = waiting.building()
    assert line is not None and "3/10" in line and "left" in line
    assert waiting.search_sync(QUESTION, 5, bar=False)  # searches go on meanwhile
    deadline = time.monotonic() + 30
    while "another builder is embedding" not in caplog.text:  # its thread is at the lock
        assert time.monotonic() < deadline, "the second builder never reached the lock"
        time.sleep(0.01)
    # It did not start a build of its own: at most the question was embedded, to search
    # with the vectors the other process's checkpoint already holds.
    assert embedder.texts <= 1
    queries = embedder.texts
    # The other process finishes and lets go: this one loads its work, embeds nothing.
    vectors_module.build_vectors(
        loaded.info.path, loaded.entries, loaded.info.fingerprint, FakeEmbedder()
    )
    other.release()
    waiting._dense.wait(30)
    assert embedder.texts == queries
    assert waiting.search_sync(QUESTION, 5, bar=False)  # with the vectors (see above)
    assert waiting._ranker is not None and waiting._ranker.vectors is not None
    assert np.array_equal(waiting._ranker.vectors, made)


def test_a_search_does_not_wait_for_an_index_being_built(
    tmp_path: Path,
    options: CollectorOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = source_with(tmp_path, options, FakeEmbedder())
    release = threading.Event()
    opened = indexer.open_index

    def slow_open(*args: object, **kwargs: object) -> object:  # held until released
        progress = args[2]
        assert callable(progress)
        progress("Parsing distributions", 4, 9)
        assert release.wait(30)
        return opened(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "open_index", slow_open)
    builder = threading.Thread(target=source.prepare)
    builder.start()
    try:
        deadline = time.monotonic() + 10
        while source.building() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert source.building() == "building the docs index: parsing distributions 4/9"
        started = time.monotonic()
        with pytest.raises(SourceError, match="parsing distributions 4/9"):
            source.search_sync(QUESTION, 5)
        assert time.monotonic() - started < 5
    finally:
        release.set()
        builder.join(30)
    assert source.search_sync(QUESTION, 5)


def test_the_most_called_entries_are_embedded_first_and_searched_with_at_once(
    tmp_path: Path,
    options: CollectorOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors_module, "_BATCH", 2)
    monkeypatch.setattr(vectors_module, "CHECKPOINT_SECONDS", 3600.0)  # only the early one
    monkeypatch.setattr(dense_module, "EARLY_POLL_SECONDS", 0.0)
    order: list[str] = []
    first: list[int] = []
    known = threading.Event()  # `first` is set: the build may go on

    class Recording(GatedEmbedder):
        def embed(self, texts: list[str]) -> Vectors:
            if len(texts) > 1 or ":" in texts[0]:  # entries, not a question
                assert known.wait(30), "the test never said which entries come first"
                # A batch that starts after the popular ones waits: they are checkpointed.
                if len(order) >= len(first):
                    assert self.gate.wait(30), "the test never opened the gate"
                order.extend(texts)
            return FakeEmbedder.embed(self, texts)

    embedder = Recording()
    source = source_with(tmp_path, options, embedder)
    source.prepare()
    loaded = source._loaded
    assert loaded is not None
    first += vectors_module.popular_rows(loaded.entries, loaded.popularity)
    known.set()
    assert 0 < len(first) < len(loaded.entries) // 2
    texts = [vectors_module.embedding_text(loaded.entries[row]) for row in first]
    deadline = time.monotonic() + 30
    while source._ranker is None or source._ranker.vectors is None:
        assert time.monotonic() < deadline, "the early vectors were never used"
        source.search_sync(QUESTION, 5)
        time.sleep(0.05)
    assert sorted(order[: len(first)]) == sorted(texts)  # the popular ones first
    early = source._ranker.vectors
    assert all(early[row].any() for row in first)
    assert not all(row.any() for row in early)  # the rest is still being embedded
    assert source.building() is not None
    embedder.gate.set()
    source._dense.wait(30)
    source.search_sync(QUESTION, 5)
    assert source._ranker.vectors is not early  # replaced by the complete set
    assert all(row.any() for row in source._ranker.vectors)
