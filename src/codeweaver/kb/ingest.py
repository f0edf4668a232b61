"""Writing files' new versions into the collection, and removing files that are gone."""

from __future__ import annotations

import os
import stat
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.kb.changes import bump
from codeweaver.kb.report import FileResult

if TYPE_CHECKING:
    from codeweaver.embeddings.base import Embedder
    from codeweaver.kb.chunking import Chunk
    from codeweaver.kb.loaders import Document
    from codeweaver.kb.versions import Indexed
    from codeweaver.memory.vector_store import VectorCollection

_ID_NAMESPACE = uuid.UUID("5b0e7a52-6c55-4c49-9a36-8f0f1d2b7c11")


@dataclass
class Pending:
    """A file's new version, chunked, waiting to be embedded and stored."""

    doc: Document
    display: str
    chunks: list[Chunk]
    old_ids: list[str]


def point_id(path: str, sha256: str, index: int) -> str:
    """Stable per file version and chunk: unchanged files keep their point ids."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"{path}\n{sha256}\n{index}"))


def write_versions(
    embedder: Embedder, collection: VectorCollection, pending: list[Pending]
) -> list[FileResult]:
    """Embed and store the `pending` versions, then delete the versions they replace."""
    from codeweaver.embeddings.base import embed_documents

    texts = [f"{p.doc.title}\n\n{c.text}" for p in pending for c in p.chunks]
    vectors = embed_documents(embedder, texts)
    now = time.time()
    ids: list[str] = []
    payloads: list[dict[str, Any]] = []
    for p in pending:
        for c in p.chunks:
            ids.append(point_id(str(p.doc.path), p.doc.sha256, c.index))
            payloads.append(chunk_payload(p, c, now))
    # The new version goes in whole before the old one goes out. Readers see a file's
    # newest whole version only (`codeweaver.kb.versions`), so a kill at any point leaves
    # each file wholly old (its new version is partial) or wholly new (its old one is
    # deleted, or only hidden until the next run deletes it).
    collection.upsert(ids, vectors, payloads)
    written = set(ids)  # a partial earlier write of the same version was overwritten
    collection.delete_ids([i for p in pending for i in p.old_ids if i not in written])
    bump()
    return [
        FileResult(str(p.doc.path), p.display, "updated" if p.old_ids else "added", len(p.chunks))
        for p in pending
    ]


def chunk_payload(p: Pending, c: Chunk, now: float) -> dict[str, Any]:
    """What is stored with chunk `c` of the pending version `p`."""
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


def vanished(path: str) -> str:
    """Why the indexed file `path` is no longer there, or "" when it is (or cannot tell)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "file was deleted"
    except OSError:
        return ""  # an unreadable folder does not mean its files are gone
    # A folder walk never indexes a symlink under its own path (see `codeweaver.kb.scan`).
    return "file was replaced by a symlink" if stat.S_ISLNK(mode) else ""


def drop_vanished(
    collection: VectorCollection,
    folders: Iterable[Path],
    manifest: dict[str, Indexed],
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
            reason = skipped.get(path) or vanished(path)
            if reason:
                collection.delete_ids(old.ids)
                chunks = len(old.current)
                results.append(FileResult(path, old.display, "removed", chunks, reason))
    if results:
        bump()
    return results
