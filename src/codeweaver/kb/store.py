"""The team knowledge base: ingest files into a vector collection, list, remove and search
(hybrid: vectors and BM25, see `codeweaver.kb.search`)."""

from __future__ import annotations

import os
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.kb.lexical import LexicalCache, LexicalIndex
from codeweaver.kb.report import FileResult, IndexedFile, IndexReport, KbHit

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
_ID_NAMESPACE = uuid.UUID("5b0e7a52-6c55-4c49-9a36-8f0f1d2b7c11")

_generation = 0
_generation_lock = threading.Lock()


def generation() -> int:
    """Bumped on every change in this process, so cached "is it empty?" answers can expire."""
    return _generation


def _bump() -> None:
    global _generation
    with _generation_lock:
        _generation += 1


def point_id(path: str, sha256: str, index: int) -> str:
    """Stable per file version and chunk: unchanged files keep their point ids."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"{path}\n{sha256}\n{index}"))


def indexed_chunk_count(settings: Settings) -> int:
    """Chunks stored for the configured embedding model, without loading the model.

    Raises `VectorStoreError` (`VectorStoreLockedError`) when the store cannot be used,
    e.g. another process holds the local store. A local store never created stays so.
    """
    from codeweaver.memory.vector_store import collection_prefix, count_store_points

    # Any dimension of the configured model counts; the dimension needs the model loaded.
    return count_store_points(settings, collection_prefix(PURPOSE, settings.kb_embedder))


@dataclass
class _Indexed:
    sha256: str = ""
    display: str = ""
    ids: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    doc: Document
    display: str
    chunks: list[Chunk]
    old_ids: list[str]


def _vanished(path: str) -> str:
    """Why the indexed file `path` is no longer there, or "" when it is (or cannot tell)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "file was deleted"
    except OSError:
        return ""  # an unreadable folder does not mean its files are gone
    # A folder walk never indexes a symlink under its own path (see `codeweaver.kb.scan`).
    return "file was replaced by a symlink" if stat.S_ISLNK(mode) else ""


class KnowledgeBase:
    """Files chunked, embedded (the embedder's document side) and stored in
    `kb__<model>__<dim>`; a BM25 index of the same chunks lives in memory."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder
        self._collection: VectorCollection | None = None
        self._lexical = LexicalCache()

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
        manifest = self._manifest()
        pending: list[_Pending] = []
        total = len(files)
        for done, (path, display) in enumerate(files.items(), 1):
            key = str(path)
            old = manifest.get(key, _Indexed())
            old_ids = old.ids
            display = old.display or display  # keep the name a file was first indexed under
            try:
                doc = load_document(path, follow_symlinks=False)  # scan resolved it
                if doc.sha256 == old.sha256:
                    report.files.append(FileResult(key, display, "unchanged", len(old_ids)))
                else:
                    pending.append(_Pending(doc, display, self._chunk(doc), old_ids))
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
        skipped = {f.path: f.reason for f in found.problems if f.outcome == "skipped"}
        report.files.extend(
            self._drop_vanished(found.folders, manifest, set(map(str, files)), skipped)
        )
        report.files.sort(key=lambda f: (f.display_path, f.path))
        report.seconds = time.perf_counter() - started
        return report

    def _chunk(self, doc: Document) -> list[Chunk]:
        from codeweaver.kb.chunking import chunk_document

        return chunk_document(doc)

    def _write(self, pending: list[_Pending]) -> list[FileResult]:
        from codeweaver.embeddings.base import embed_documents

        if not pending:
            return []
        texts = [f"{p.doc.title}\n\n{c.text}" for p in pending for c in p.chunks]
        vectors = embed_documents(self.embedder, texts)
        now = time.time()
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        for p in pending:
            for c in p.chunks:
                ids.append(point_id(str(p.doc.path), p.doc.sha256, c.index))
                payloads.append(self._payload(p, c, now))
        # New chunks go in before old ones go out: a crash never leaves a file unindexed.
        self.collection.upsert(ids, vectors, payloads)
        self.collection.delete_ids([i for p in pending for i in p.old_ids])
        _bump()
        return [
            FileResult(
                str(p.doc.path), p.display, "updated" if p.old_ids else "added", len(p.chunks)
            )
            for p in pending
        ]

    @staticmethod
    def _payload(p: _Pending, c: Chunk, now: float) -> dict[str, Any]:
        return {
            "path": str(p.doc.path),
            "display_path": p.display,
            "chunk_index": c.index,
            "start_line": c.start_line,
            "page": c.page,
            "title": p.doc.title,
            "kind": p.doc.kind.kind,
            "text": c.text,
            "sha256": p.doc.sha256,
            "mtime": p.doc.mtime,
            "indexed_at": now,
        }

    def _manifest(self) -> dict[str, _Indexed]:
        """What is indexed now, by file path."""
        manifest: dict[str, _Indexed] = {}
        for pid, payload in self.collection.scroll(fields=["path", "sha256", "display_path"]):
            entry = manifest.setdefault(
                str(payload.get("path", "")),
                _Indexed(str(payload.get("sha256", "")), str(payload.get("display_path", ""))),
            )
            entry.ids.append(pid)
        return manifest

    def _drop_vanished(
        self,
        folders: Iterable[Path],
        manifest: dict[str, _Indexed],
        seen: set[str],
        skipped: dict[str, str],
    ) -> list[FileResult]:
        """Files indexed under a re-added folder that are gone, or now skipped, are removed.

        A file now skipped (say, replaced by a symlink out of the folder) loses the chunks
        an earlier run stored for it.
        """
        results: list[FileResult] = []
        for folder in folders:
            prefix = str(folder).rstrip(os.sep) + os.sep
            for path, old in manifest.items():
                if not path.startswith(prefix) or path in seen:
                    continue
                reason = skipped.get(path) or _vanished(path)
                if reason:
                    self.collection.delete_ids(old.ids)
                    results.append(FileResult(path, old.display, "removed", len(old.ids), reason))
        if results:
            _bump()
        return results

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
            _bump()
        report.seconds = time.perf_counter() - started
        return report

    def list_files(self) -> list[IndexedFile]:
        """Indexed files with their chunk counts, sorted by display path."""
        fields = ["path", "display_path", "title", "sha256", "indexed_at"]
        files: dict[str, dict[str, Any]] = {}
        for _pid, payload in self.collection.scroll(fields=fields):
            entry = files.setdefault(str(payload.get("path")), {**payload, "chunks": 0})
            entry["chunks"] += 1
        return sorted(
            (
                IndexedFile(
                    path=str(e["path"]),
                    display_path=str(e.get("display_path", e["path"])),
                    title=str(e.get("title", "")),
                    chunks=int(e["chunks"]),
                    indexed_at=float(e.get("indexed_at", 0.0)),
                    sha256=str(e.get("sha256", "")),
                )
                for e in files.values()
            ),
            key=lambda f: (f.display_path, f.path),
        )

    def chunk_count(self) -> int:
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
        return hybrid_search(self.collection, self.embedder, self.lexical_index(), query, limit)

    def lexical_index(self) -> LexicalIndex:
        """The BM25 index of the chunks, rebuilt when the knowledge base changed.

        Keyed on this process's change counter and the chunk count, so a change made by
        another process (which the counter cannot see) is noticed when the count moves.
        """
        collection = self.collection
        key = (generation(), collection.count())
        return self._lexical.get(key, self._lexical_texts)

    def _lexical_texts(self) -> tuple[list[str], list[str]]:
        ids: list[str] = []
        texts: list[str] = []
        for pid, payload in self.collection.scroll(fields=["title", "text"]):
            ids.append(pid)
            texts.append(f"{payload.get('title', '')}\n{payload.get('text', '')}")
        return ids, texts
