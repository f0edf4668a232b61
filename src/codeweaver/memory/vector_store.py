"""The vector-store interface and the registry of backends by name.

The semantic cache and the knowledge base keep their vectors in one cosine collection per
purpose, model and dimension (`collection_name`). Which store holds them is a setting,
`CODEWEAVER_VECTOR_STORE`: `qdrant` (a local folder, or `QDRANT_URL`) or `milvus`
(Milvus Lite in a local file, or `MILVUS_URI`). Callers open collections through
`open_collection` and never import a backend. Other packages add backends under the
`codeweaver.vector_stores` entry-point group: a factory taking the settings and returning
a `VectorStore`.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from codeweaver.registry import Registry, UnknownNameError

if TYPE_CHECKING:
    from codeweaver.config import Settings

Payload = dict[str, Any]
# Filters are plain mappings: field -> value (match) or field -> list of values (any of).
Where = Mapping[str, Any]


class VectorStoreError(RuntimeError):
    """The vector store cannot be opened or used."""


class VectorStoreNotWritableError(VectorStoreError):
    """A local store's folder (or a file in it) cannot be written: a read-only file
    system, its owner or mode, an immutable flag. Said as such, never as "in use"."""

    def __init__(self, folder: Path, cause: str) -> None:
        self.folder = folder
        self.cause = cause
        super().__init__(
            f"the vector store folder {folder} is not writable ({cause}); make it writable "
            "or set CODEWEAVER_DATA_DIR to a writable folder"
        )


_DENIED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def unwritable(
    folder: Path, files: Sequence[str] = (), *, probe: bool = False
) -> VectorStoreNotWritableError | None:
    """Why the local store in `folder` (created if missing), or one of its `files` that
    exists, cannot be written; None when nothing says so.

    access(2) answers for root too on a read-only file system or an immutable file, and
    writes nothing. `probe` also tries: it opens the files for writing (changing nothing)
    and creates and removes a scratch file, which finds what access(2) cannot see.
    """
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # a missing folder is created in the nearest one
    for target in [existing, *(folder / name for name in files if (folder / name).exists())]:
        if not os.access(target, os.W_OK):
            return VectorStoreNotWritableError(folder, _denial(target))
    if not probe or not folder.is_dir():
        return None
    try:
        for name in files:
            if (folder / name).exists():
                with (folder / name).open("r+b"):
                    pass
        scratch = folder / f".codeweaver-write-check-{os.getpid()}"
        with scratch.open("wb"):
            pass
        scratch.unlink()
    except OSError as exc:
        if exc.errno in _DENIED:
            return VectorStoreNotWritableError(folder, exc.strerror or type(exc).__name__)
    return None


def _denial(path: Path) -> str:
    """How access(2) was refused, in its own words."""
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs on Windows
        read_only = False
    return os.strerror(errno.EROFS if read_only else errno.EACCES)


def collection_name(purpose: str, model: str, dimension: int) -> str:
    """`kb__minilm__384`: switching models or dimensions never mixes vectors."""
    return f"{_slug(purpose)}__{_slug(model)}__{int(dimension)}"


def collection_prefix(purpose: str, model: str) -> str:
    """The common start of `collection_name(purpose, model, dimension)` for any dimension."""
    return f"{_slug(purpose)}__{_slug(model)}__"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower()).strip("-") or "default"


@dataclass(frozen=True)
class Hit:
    id: str
    score: float  # cosine similarity: 1.0 for the same direction, higher is closer
    payload: Payload


@runtime_checkable
class VectorCollection(Protocol):
    """One cosine collection of a fixed dimension. Ids are strings (UUIDs); payload values
    are str, int, float, bool, None or lists of str. A missing collection reads as empty;
    the first `upsert` creates it."""

    name: str  # as the store knows it
    dimension: int

    def exists(self) -> bool: ...

    def ensure(self) -> None:
        """Create the collection if it is missing."""
        ...

    def upsert(
        self, ids: Sequence[str], vectors: NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        """Insert or replace points; vectors must have the collection's dimension."""
        ...

    def query(
        self, vector: NDArray[np.float32], limit: int, where: Where | None = None
    ) -> list[Hit]:
        """The `limit` nearest points, most similar first."""
        ...

    def delete(self, where: Where) -> None:
        """Delete the points matching `where` (never everything: `where` must be non-empty)."""
        ...

    def delete_ids(self, ids: Sequence[str]) -> None: ...

    def set_payload(self, ids: Sequence[str], payload: Payload) -> None:
        """Merge `payload` into the given points' payloads (points gone meanwhile are skipped)."""
        ...

    def count(self, where: Where | None = None) -> int: ...

    def scroll(
        self, where: Where | None = None, fields: Sequence[str] | None = None, page: int = 1024
    ) -> Iterator[tuple[str, Payload]]:
        """Every matching point's id and payload (only `fields` when given), page by page."""
        ...

    def retrieve(self, ids: Sequence[str]) -> dict[str, Payload]:
        """Payloads by id; ids with no point are left out."""
        ...

    def describe(self) -> str:
        """Where the collection lives, for messages (never a secret)."""
        ...


class VectorStore(Protocol):
    """One backend bound to the settings: where its collections live."""

    @property
    def label(self) -> str:
        """Backend and kind, e.g. `qdrant-local`, `milvus-server` (for health checks)."""
        ...

    def describe(self) -> str:
        """Backend and place, e.g. `milvus-lite file /data/milvus.db` (never a secret)."""
        ...

    def present(self) -> bool:
        """False when a local store was never created (nothing to count, nothing to open)."""
        ...

    def open(
        self, purpose: str, model: str, dimension: int, keyword_fields: Sequence[str] = ()
    ) -> VectorCollection: ...

    def list_collections(self, prefix: str = "") -> list[str]:
        """Names as `collection_name` makes them, starting with `prefix`, sorted."""
        ...

    def count_points(self, name: str) -> int:
        """Points in the collection `collection_name` called `name` (0 when missing)."""
        ...


VectorStoreFactory = Callable[["Settings"], VectorStore]

# Built-in backends register themselves when their module is imported; other packages
# register theirs under the `codeweaver.vector_stores` entry-point group.
VECTOR_STORES: Registry[VectorStoreFactory] = Registry(
    "vector store",
    group="codeweaver.vector_stores",
    builtins=["codeweaver.memory.qdrant_store", "codeweaver.memory.milvus_store"],
)
register_vector_store = VECTOR_STORES.register  # decorator: `@register_vector_store("name")`


def vector_store(settings: Settings) -> VectorStore:
    """The backend `settings.vector_store` names; an unknown name lists the known ones."""
    name = settings.vector_store.strip().lower()
    try:
        factory = VECTOR_STORES.get(name)
    except UnknownNameError as exc:
        raise VectorStoreError(f"{exc} (set CODEWEAVER_VECTOR_STORE to one of them)") from None
    return factory(settings)


def open_collection(
    settings: Settings,
    purpose: str,
    model: str,
    dimension: int,
    keyword_fields: Sequence[str] = (),
) -> VectorCollection:
    """The collection of `purpose` for vectors of `model` and `dimension`, in the
    configured store (opened now, so a store that cannot be used fails here)."""
    return vector_store(settings).open(purpose, model, dimension, keyword_fields)


def store_description(settings: Settings) -> str:
    """E.g. `qdrant folder /data/qdrant`, `milvus-server http://…` (never a secret); a
    health report shows an unknown backend name rather than failing."""
    try:
        return vector_store(settings).describe()
    except VectorStoreError as exc:
        return str(exc)


def store_label(settings: Settings) -> str:
    """E.g. `qdrant-local`, `qdrant-server`, `milvus-lite`, `milvus-server`."""
    try:
        return vector_store(settings).label
    except VectorStoreError:
        return f"unknown ({settings.vector_store})"


def count_store_points(settings: Settings, prefix: str) -> int:
    """Points in every collection whose name starts with `prefix` (see `collection_prefix`);
    0 without creating anything when the local store was never made."""
    store = vector_store(settings)
    if not store.present():
        return 0
    return sum(store.count_points(name) for name in store.list_collections(prefix))


def close_vector_stores() -> None:
    """Close every shared client of the built-in backends (tests, shutdown), releasing
    local folders and files for other processes. Backends never imported are skipped."""
    for module in ("codeweaver.memory.store_clients", "codeweaver.memory.milvus_clients"):
        loaded = sys.modules.get(module)
        if loaded is not None:
            loaded.close_shared_clients()
