"""The team knowledge base: ingest files into a vector collection, list, remove and search
(hybrid: vectors and BM25, see `codeweaver.kb.search`).

A file's chunks are replaced without a moment where readers see two versions of it, even
if the process is killed: each chunk records how many chunks its version has, and readers
see, per file, only its newest whole version (`_current`). A new version is written in
full before the old one is deleted, so it counts for readers only once its last chunk is
in; whatever a killed run leaves behind stays hidden until the next run deletes it.
"""

from __future__ import annotations

import os
import stat
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from codeweaver.kb.lexical import LexicalCache, LexicalIndex
from codeweaver.kb.report import FileResult, IndexedFile, IndexReport, KbHit

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.embeddings.base import Embedder
    from codeweaver.kb.chunking import Chunk
    from codeweaver.kb.loaders import Document
    from codeweaver.memory.vector_store import Hit, Payload, VectorCollection

Progress = Callable[[str, int, int], None]  # (phase, done, total)

PURPOSE = "kb"
KEYWORD_FIELDS = ("path", "sha256")
# What tells a file's versions apart, and which one readers see.
VERSION_FIELDS = ("path", "sha256", "chunks", "indexed_at")
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
class _Version:
    """The stored chunks of one version (content hash) of one file."""

    payload: Payload  # one of its chunks' payload: the file's fields
    ids: list[str] = field(default_factory=list)

    @property
    def total(self) -> int | None:
        """How many chunks the whole version has (None: stored before this was kept)."""
        total = self.payload.get("chunks")
        return int(total) if isinstance(total, int | float) else None

    @property
    def whole(self) -> bool:
        return self.total is None or len(self.ids) >= self.total

    def order(self) -> tuple[bool, float, str]:
        """Readers see the greatest: whole before partial, then the newest."""
        indexed_at = self.payload.get("indexed_at")
        when = float(indexed_at) if isinstance(indexed_at, int | float) else 0.0
        return (self.whole, when, str(self.payload.get("sha256", "")))


def _versions(points: Iterable[tuple[str, Payload]]) -> dict[str, list[_Version]]:
    """Stored chunks by file path, then by version."""
    found: dict[str, dict[str, _Version]] = {}
    for pid, payload in points:
        versions = found.setdefault(str(payload.get("path", "")), {})
        version = versions.setdefault(str(payload.get("sha256", "")), _Version(payload))
        version.ids.append(pid)
    return {path: list(versions.values()) for path, versions in found.items()}


def _current(versions: Sequence[_Version]) -> _Version:
    """The version of a file readers see: its newest whole one. A run killed while it
    wrote a version, or deleted the one before, leaves that version partial. None whole
    happens only to a reader whose scroll crossed a change: it gets the newest."""
    return max(versions, key=_Version.order)


def _hidden(files: dict[str, list[_Version]]) -> frozenset[str]:
    """The ids of every chunk outside its file's current version."""
    current = {path: _current(versions) for path, versions in files.items()}
    return frozenset(
        pid
        for path, versions in files.items()
        for version in versions
        if version is not current[path]
        for pid in version.ids
    )


class _CurrentChunks:
    """The collection as readers must see it: without the `hidden` chunks (the other
    versions of files being replaced, or left behind by a killed run)."""

    def __init__(self, collection: VectorCollection, hidden: frozenset[str]) -> None:
        self._collection = collection
        self._hidden = hidden

    def query(self, vector: Any, limit: int, where: Any = None) -> list[Hit]:
        # Every hidden chunk could rank before the first visible one: ask for as many more.
        hits = self._collection.query(vector, limit + len(self._hidden), where)
        return [h for h in hits if h.id not in self._hidden][:limit]

    def retrieve(self, ids: Sequence[str]) -> dict[str, Payload]:
        return self._collection.retrieve([i for i in ids if i not in self._hidden])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


@dataclass
class _Indexed:
    sha256: str = ""  # of the version readers see
    display: str = ""
    ids: list[str] = field(default_factory=list)  # every version's
    current: list[str] = field(default_factory=list)  # the version readers see
    # False when the version readers see may be partial: chunks stored before versions
    # counted their chunks, beside another version of the file. Such a file is rewritten.
    sure: bool = True


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
        manifest = self._manifest()
        pending: list[_Pending] = []
        leftovers: list[str] = []  # another version beside an unchanged file's
        total = len(files)
        for done, (path, display) in enumerate(files.items(), 1):
            key = str(path)
            old = manifest.get(key, _Indexed())
            old_ids = old.ids
            display = old.display or display  # keep the name a file was first indexed under
            try:
                doc = load_document(path, follow_symlinks=False)  # scan resolved it
                if doc.sha256 == old.sha256 and old.sure:
                    report.files.append(FileResult(key, display, "unchanged", len(old.current)))
                    seen = set(old.current)
                    leftovers += [i for i in old_ids if i not in seen]
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
        if leftovers:  # what a killed run left behind
            self.collection.delete_ids(leftovers)
            _bump()
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
        # The new version goes in whole before the old one goes out. Readers see a file's
        # newest whole version only (`_current`), so a kill at any point leaves each file
        # wholly old (its new version is partial) or wholly new (its old one is deleted,
        # or only hidden until the next run deletes it).
        self.collection.upsert(ids, vectors, payloads)
        written = set(ids)  # a partial earlier write of the same version was overwritten
        self.collection.delete_ids([i for p in pending for i in p.old_ids if i not in written])
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
            "chunks": len(p.chunks),  # the version is whole once this many are stored
            "mtime": p.doc.mtime,
            "indexed_at": now,
        }

    def _manifest(self) -> dict[str, _Indexed]:
        """What is indexed now, by file path: the version readers see, and every id."""
        manifest: dict[str, _Indexed] = {}
        points = self.collection.scroll(fields=[*VERSION_FIELDS, "display_path"])
        for path, versions in _versions(points).items():
            current = _current(versions)
            manifest[path] = _Indexed(
                sha256=str(current.payload.get("sha256", "")),
                display=str(current.payload.get("display_path", "")),
                ids=[pid for version in versions for pid in version.ids],
                current=current.ids,
                sure=current.total is not None or len(versions) == 1,
            )
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
                    chunks = len(old.current)
                    results.append(FileResult(path, old.display, "removed", chunks, reason))
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
        """Indexed files (the version readers see) with their chunk counts, sorted by
        display path."""
        points = self.collection.scroll(fields=[*VERSION_FIELDS, "display_path", "title"])
        listed: list[IndexedFile] = []
        for path, versions in _versions(points).items():
            current = _current(versions)
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
            collection = cast("VectorCollection", _CurrentChunks(collection, hidden))
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
        hidden = _hidden(_versions(self.collection.scroll(fields=VERSION_FIELDS)))
        self._hidden = (key, hidden)
        return hidden

    def _lexical_texts(self, key: Hashable) -> tuple[list[str], list[str]]:
        points = list(self.collection.scroll(fields=[*VERSION_FIELDS, "title", "text"]))
        hidden = _hidden(_versions(points))
        self._hidden = (key, hidden)
        ids: list[str] = []
        texts: list[str] = []
        for pid, payload in _without(points, hidden):
            ids.append(pid)
            texts.append(f"{payload.get('title', '')}\n{payload.get('text', '')}")
        return ids, texts


def _without(
    points: Iterable[tuple[str, Payload]], hidden: frozenset[str]
) -> Iterator[tuple[str, Payload]]:
    return ((pid, payload) for pid, payload in points if pid not in hidden)
