"""The team knowledge base: ingest files into a vector collection, list, remove and search
(hybrid: vectors and BM25, see `codeweaver.kb.search`).

A file's chunks are replaced without a moment where readers see two versions of it, even
if the process is killed: each chunk records how many chunks its version has, and readers
see, per file, only its newest whole version (`codeweaver.kb.versions`). A new version is
written in full before the old one is deleted (`codeweaver.kb.ingest`), so it counts for
readers only once its last chunk is in; whatever a killed run leaves behind stays hidden
until the next run deletes it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from codeweaver.kb.changes import bump, generation
from codeweaver.kb.ingest import Pending, drop_vanished, write_versions
from codeweaver.kb.lexical import LexicalCache, LexicalIndex
from codeweaver.kb.report import FileResult, IndexedFile, IndexReport, KbHit
from codeweaver.kb.versions import (
    VERSION_FIELDS,
    CurrentChunks,
    Indexed,
    current_version,
    hidden_chunks,
    manifest,
    versions_by_file,
    visible_points,
)

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.embeddings.base import Embedder
    from codeweaver.kb.chunking import Chunk
    from codeweaver.kb.loaders import Document
    from codeweaver.memory.vector_store import VectorCollection

Progress = Callable[[str, int, int], None]  # (phase, done, total)

PURPOSE = "kb"
KEYWORD_FIELDS = ("path", "sha256")
# Files are embedded together once this many chunks are pending: large batches are faster.
EMBED_BATCH_CHUNKS = 128


def indexed_chunk_count(settings: Settings) -> int:
    """Chunks stored for the configured embedding model, without loading the model.

    Raises `VectorStoreError` (`VectorStoreLockedError`) when the store cannot be used,
    e.g. another process holds the local store. A local store never created stays so.
    """
    from codeweaver.memory.vector_store import collection_prefix, count_store_points

    # Any dimension of the configured model counts; the dimension needs the model loaded.
    return count_store_points(settings, collection_prefix(PURPOSE, settings.kb_embedder))


class KnowledgeBase:
    """Files chunked, embedded (the embedder's document side) and stored in
    `kb__<model>__<dim>`; a BM25 index of the same chunks lives in memory."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder
        self._collection: VectorCollection | None = None
        self._lexical = LexicalCache()
        # The chunks readers must not see, and the key they were found under.
        self._hidden: tuple[Hashable, frozenset[str]] | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from codeweaver.embeddings import create_embedder

            self._embedder = create_embedder(self.settings.kb_embedder, self.settings)
        return self._embedder

    @property
    def collection(self) -> VectorCollection:
        if self._collection is None:
            from codeweaver.memory.vector_store import open_collection

            embedder = self.embedder
            self._collection = open_collection(
                self.settings, PURPOSE, embedder.name, embedder.dimension, KEYWORD_FIELDS
            )
        return self._collection

    # -- ingest ---------------------------------------------------------------------------

    def add(
        self,
        paths: Sequence[str | Path],
        progress: Progress | None = None,
        *,
        include_hidden: bool = False,
    ) -> IndexReport:
        """Index files and folders; unchanged files are skipped, changed ones replaced.

        Which files are read (symlinks, hidden files, FIFOs): see `codeweaver.kb.scan`.
        """
        from codeweaver.kb.loaders import LoadError, load_document
        from codeweaver.kb.scan import scan

        started = time.perf_counter()
        report = IndexReport()
        notify = progress or (lambda phase, done, total: None)
        notify("scanning", 0, 0)
        found = scan(paths, include_hidden=include_hidden)
        report.files.extend(found.problems)
        files = found.files
        notify("scanning", len(files), len(files))
        indexed = manifest(self.collection)
        pending: list[Pending] = []
        leftovers: list[str] = []  # another version beside an unchanged file's
        total = len(files)
        for done, (path, display) in enumerate(files.items(), 1):
            key = str(path)
            old = indexed.get(key, Indexed())
            old_ids = old.ids
            display = old.display or display  # keep the name a file was first indexed under
            try:
                doc = load_document(path, follow_symlinks=False)  # scan resolved it
                if doc.sha256 == old.sha256 and old.sure:
                    report.files.append(FileResult(key, display, "unchanged", len(old.current)))
                    seen = set(old.current)
                    leftovers += [i for i in old_ids if i not in seen]
                else:
                    pending.append(Pending(doc, display, self._chunk(doc), old_ids))
            except LoadError as exc:
                report.files.append(FileResult(key, display, "failed", 0, str(exc)))
            except Exception as exc:  # one odd file must not stop the run
                reason = f"{type(exc).__name__}: {exc}"
                report.files.append(FileResult(key, display, "failed", 0, reason))
            if sum(len(p.chunks) for p in pending) >= EMBED_BATCH_CHUNKS:
                report.files.extend(self._write(pending))
                pending = []
            notify("indexing", done, total)
        report.files.extend(self._write(pending))
        if leftovers:  # what a killed run left behind
            self.collection.delete_ids(leftovers)
            bump()
        skipped = {f.path: f.reason for f in found.problems if f.outcome == "skipped"}
        report.files.extend(
            drop_vanished(self.collection, found.folders, indexed, set(map(str, files)), skipped)
        )
        report.files.sort(key=lambda f: (f.display_path, f.path))
        report.seconds = time.perf_counter() - started
        return report

    def _chunk(self, doc: Document) -> list[Chunk]:
        from codeweaver.kb.chunking import chunk_document

        return chunk_document(doc)

    def _write(self, pending: list[Pending]) -> list[FileResult]:
        if not pending:
            return []
        return write_versions(self.embedder, self.collection, pending)

    # -- manage ---------------------------------------------------------------------------

    def remove(self, paths: Sequence[str | Path]) -> IndexReport:
        """Delete the chunks of files, or of every file under folders, given by path."""
        started = time.perf_counter()
        report = IndexReport()
        indexed = {f.path: f for f in self.list_files()}
        for given in paths:
            if not str(given).strip():  # Path("") is the current folder: never a target
                report.files.append(FileResult(str(given), str(given), "failed", 0, "empty path"))
                continue
            target = str(Path(given).expanduser().resolve())
            prefix = target.rstrip(os.sep) + os.sep
            matched = [f for p, f in indexed.items() if p == target or p.startswith(prefix)]
            if not matched:
                report.files.append(FileResult(target, str(given), "failed", 0, "not indexed"))
                continue
            self.collection.delete({"path": [f.path for f in matched]})
            for f in matched:
                report.files.append(FileResult(f.path, f.display_path, "removed", f.chunks))
                indexed.pop(f.path, None)
        if report.of("removed"):
            bump()
        report.seconds = time.perf_counter() - started
        return report

    def list_files(self) -> list[IndexedFile]:
        """Indexed files (the version readers see) with their chunk counts, sorted by
        display path."""
        points = self.collection.scroll(fields=[*VERSION_FIELDS, "display_path", "title"])
        listed: list[IndexedFile] = []
        for path, versions in versions_by_file(points).items():
            current = current_version(versions)
            e = current.payload
            listed.append(
                IndexedFile(
                    path=path,
                    display_path=str(e.get("display_path", path)),
                    title=str(e.get("title", "")),
                    chunks=len(current.ids),
                    indexed_at=float(e.get("indexed_at", 0.0)),
                    sha256=str(e.get("sha256", "")),
                )
            )
        return sorted(listed, key=lambda f: (f.display_path, f.path))

    def chunk_count(self) -> int:
        """Chunks stored, including any a killed run left behind (`list_files` counts
        only what readers see)."""
        return self.collection.count()

    # -- search ---------------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[KbHit]:
        """The `limit` best chunks for `query`: dense (cosine) and BM25 candidates fused by
        reciprocal rank (`codeweaver.kb.search`).

        `KbHit.score` is the fused score over its maximum 2/(k+1), k = 60: a relevance in
        [0, 1], 1.0 for a chunk first in both rankings, 0.5 for one first in one only.
        """
        from codeweaver.kb.search import hybrid_search

        if limit <= 0 or not query.strip():
            return []
        key = self._key()
        lexical = self._lexical.get(key, lambda: self._lexical_texts(key))
        hidden = self._hidden_ids(key)
        collection = self.collection
        if hidden:
            # Duck-typed: the search asks only for `query` and `retrieve`.
            collection = cast("VectorCollection", CurrentChunks(collection, hidden))
        return hybrid_search(collection, self.embedder, lexical, query, limit)

    def lexical_index(self) -> LexicalIndex:
        """The BM25 index of the chunks readers see, rebuilt when the knowledge base
        changed.

        Keyed on this process's change counter and the chunk count, so a change made by
        another process (which the counter cannot see) is noticed when the count moves.
        """
        key = self._key()
        return self._lexical.get(key, lambda: self._lexical_texts(key))

    def _key(self) -> Hashable:
        return (generation(), self.collection.count())

    def _hidden_ids(self, key: Hashable) -> frozenset[str]:
        """The chunks readers must not see, as of `key` (found with the lexical index)."""
        known = self._hidden
        if known is not None and known[0] == key:
            return known[1]
        # Another thread rebuilt for a newer key meanwhile: look again.
        hidden = hidden_chunks(versions_by_file(self.collection.scroll(fields=VERSION_FIELDS)))
        self._hidden = (key, hidden)
        return hidden

    def _lexical_texts(self, key: Hashable) -> tuple[list[str], list[str]]:
        points = list(self.collection.scroll(fields=[*VERSION_FIELDS, "title", "text"]))
        hidden = hidden_chunks(versions_by_file(points))
        self._hidden = (key, hidden)
        ids: list[str] = []
        texts: list[str] = []
        for pid, payload in visible_points(points, hidden):
            ids.append(pid)
            texts.append(f"{payload.get('title', '')}\n{payload.get('text', '')}")
        return ids, texts
