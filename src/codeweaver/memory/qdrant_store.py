"""The Qdrant backend (`CODEWEAVER_VECTOR_STORE=qdrant`, the default): a thin layer over
qdrant-client, one cosine collection per purpose, model and dimension.

Local mode (the default) stores vectors under `Settings.qdrant_path`; clients and the
handing of a local folder between processes are in `memory.store_clients`. A local
folder that cannot be written is reported so (`VectorStoreNotWritableError`): its lock
file, which cannot be taken then, must not read as another process holding the folder.
With `QDRANT_URL` set, a Qdrant server is used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from codeweaver.memory.store_clients import StoreLocation, VectorStoreLockedError, using
from codeweaver.memory.vector_store import (
    Hit,
    Payload,
    VectorCollection,
    Where,
    collection_name,
    register_vector_store,
    unwritable,
)

if TYPE_CHECKING:
    from qdrant_client import QdrantClient
    from qdrant_client.http import models

    from codeweaver.config import Settings


class QdrantCollection:
    """One cosine-distance Qdrant collection of a fixed dimension (`VectorCollection`)."""

    def __init__(
        self,
        location: StoreLocation,
        name: str,
        dimension: int,
        keyword_fields: Sequence[str] = (),
    ) -> None:
        self.location = location
        self.name = name
        self.dimension = dimension
        self.keyword_fields = tuple(keyword_fields)
        _check_writable(location)
        with _using(location):  # fail now (e.g. locked for good), not on first use
            pass

    @classmethod
    def open(
        cls,
        settings: Settings,
        purpose: str,
        model: str,
        dimension: int,
        keyword_fields: Sequence[str] = (),
    ) -> QdrantCollection:
        return cls(
            StoreLocation.from_settings(settings),
            collection_name(purpose, model, dimension),
            dimension,
            keyword_fields,
        )

    def exists(self) -> bool:
        with _using(self.location) as client:
            return bool(client.collection_exists(self.name))

    def ensure(self) -> None:
        """Create the collection (and, on a server, its payload indexes) if missing."""
        from qdrant_client.http import models

        with _using(self.location) as client:
            if client.collection_exists(self.name):
                return
            client.create_collection(
                self.name,
                vectors_config=models.VectorParams(
                    size=self.dimension, distance=models.Distance.COSINE
                ),
            )
            # Local mode ignores payload indexes (and warns); a server uses them for filters.
            if not self.location.local:
                for name in self.keyword_fields:
                    client.create_payload_index(
                        self.name, name, field_schema=models.PayloadSchemaType.KEYWORD
                    )

    def upsert(
        self, ids: Sequence[str], vectors: NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        from qdrant_client.http import models

        if not (len(ids) == len(vectors) == len(payloads)):
            raise ValueError("ids, vectors and payloads must have the same length")
        if len(ids) == 0:
            return
        if vectors.shape[1] != self.dimension:
            raise ValueError(
                f"vectors have {vectors.shape[1]} dimensions, expected {self.dimension}"
            )
        self.ensure()
        points = [
            models.PointStruct(id=pid, vector=vector.tolist(), payload=payload)
            for pid, vector, payload in zip(ids, vectors, payloads, strict=True)
        ]
        with _using(self.location) as client:
            client.upsert(self.name, points=points, wait=True)

    def query(
        self, vector: NDArray[np.float32], limit: int, where: Where | None = None
    ) -> list[Hit]:
        if not self.exists():
            return []
        with _using(self.location) as client:
            response = client.query_points(
                self.name,
                query=vector.astype(np.float32).tolist(),
                query_filter=_filter(where),
                limit=limit,
                with_payload=True,
            )
        return [Hit(str(p.id), float(p.score), dict(p.payload or {})) for p in response.points]

    def delete(self, where: Where) -> None:
        """Delete the points matching `where` (never everything: `where` must be non-empty)."""
        from qdrant_client.http import models

        flt = _filter(where)
        if flt is None:
            raise ValueError("refusing to delete without a filter")
        if not self.exists():
            return
        with _using(self.location) as client:
            client.delete(self.name, points_selector=models.FilterSelector(filter=flt), wait=True)

    def delete_ids(self, ids: Sequence[str]) -> None:
        from qdrant_client.http import models

        if not ids or not self.exists():
            return
        with _using(self.location) as client:
            client.delete(
                self.name, points_selector=models.PointIdsList(points=list(ids)), wait=True
            )

    def set_payload(self, ids: Sequence[str], payload: Payload) -> None:
        """Merge `payload` into the given points' payloads (points gone meanwhile are skipped)."""
        from qdrant_client.http import models

        if not ids or not self.exists():
            return
        # Selecting by filter skips missing ids; a list of ids fails on the first one.
        selector = models.Filter(must=[models.HasIdCondition(has_id=list(ids))])
        with _using(self.location) as client:
            client.set_payload(self.name, payload=payload, points=selector)

    def count(self, where: Where | None = None) -> int:
        if not self.exists():
            return 0
        with _using(self.location) as client:
            return int(client.count(self.name, count_filter=_filter(where), exact=True).count)

    def scroll(
        self, where: Where | None = None, fields: Sequence[str] | None = None, page: int = 1024
    ) -> Iterator[tuple[str, Payload]]:
        """Every matching point's id and payload (only `fields` when given), page by page."""
        if not self.exists():
            return
        offset: Any = None
        selector: bool | list[str] = list(fields) if fields is not None else True
        while True:
            with _using(self.location) as client:
                records, offset = client.scroll(
                    self.name,
                    scroll_filter=_filter(where),
                    limit=page,
                    offset=offset,
                    with_payload=selector,
                    with_vectors=False,
                )
            for record in records:
                yield str(record.id), dict(record.payload or {})
            if offset is None:
                return

    def retrieve(self, ids: Sequence[str]) -> dict[str, Payload]:
        if not ids or not self.exists():
            return {}
        with _using(self.location) as client:
            records = client.retrieve(self.name, ids=list(ids), with_payload=True)
        return {str(r.id): dict(r.payload or {}) for r in records}

    def describe(self) -> str:
        return self.location.describe()


# Qdrant's lock file: every process that opens a local folder writes it.
_LOCK_FILE = ".lock"


def _check_writable(location: StoreLocation) -> None:
    """Fail now, as such, on a local folder that cannot be written: its lock file could
    not be taken, which would read as another process holding the folder."""
    if location.folder is not None:
        problem = unwritable(location.folder, [_LOCK_FILE])
        if problem is not None:
            raise problem


@contextlib.contextmanager
def _using(location: StoreLocation) -> Iterator[QdrantClient]:
    """`using`, where a folder found locked is first tried for writing: one that cannot
    be written is named so (what access(2) missed, e.g. a refusal by a security module)."""
    try:
        with using(location) as client:
            yield client
    except VectorStoreLockedError as exc:
        folder = location.folder
        problem = unwritable(folder, [_LOCK_FILE], probe=True) if folder else None
        if problem is not None:
            raise problem from exc
        raise


def list_collections(location: StoreLocation, prefix: str = "") -> list[str]:
    _check_writable(location)
    with _using(location) as client:
        names = [c.name for c in client.get_collections().collections]
    return sorted(n for n in names if n.startswith(prefix))


def count_points(location: StoreLocation, name: str) -> int:
    _check_writable(location)
    with _using(location) as client:
        if not client.collection_exists(name):
            return 0
        return int(client.count(name, exact=True).count)


def _filter(where: Where | None) -> models.Filter | None:
    from qdrant_client.http import models

    if not where:
        return None
    must: list[models.Condition] = []
    for key, value in where.items():
        if isinstance(value, list | tuple | set | frozenset):
            must.append(models.FieldCondition(key=key, match=models.MatchAny(any=list(value))))
        else:
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
    return models.Filter(must=must)


@register_vector_store("qdrant")
class QdrantStore:
    """The `VectorStore` of the settings' Qdrant: a local folder, or `QDRANT_URL`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.location = StoreLocation.from_settings(settings)

    @property
    def label(self) -> str:
        return "qdrant-local" if self.location.local else "qdrant-server"

    def describe(self) -> str:
        kind = "folder" if self.location.local else "server"
        return f"qdrant {kind} {self.location.describe()}"

    def present(self) -> bool:
        folder = self.location.folder
        return folder is None or folder.exists()

    def open(
        self, purpose: str, model: str, dimension: int, keyword_fields: Sequence[str] = ()
    ) -> VectorCollection:
        return QdrantCollection.open(self.settings, purpose, model, dimension, keyword_fields)

    def list_collections(self, prefix: str = "") -> list[str]:
        return list_collections(self.location, prefix)

    def count_points(self, name: str) -> int:
        return count_points(self.location, name)
