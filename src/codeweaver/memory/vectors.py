"""A thin layer over qdrant-client: shared clients, one collection per purpose and model.

Local mode (the default) stores vectors under `Settings.qdrant_path`; Qdrant allows one
client per folder, so one client is shared per folder within a process and a second
process gets `VectorStoreLockedError`. With `QDRANT_URL` set, a Qdrant server is used.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from qdrant_client import QdrantClient
    from qdrant_client.http import models

    from codeweaver.config import Settings

Payload = dict[str, Any]
# Filters are plain mappings: field -> value (match) or field -> list of values (any of).
Where = Mapping[str, Any]


class VectorStoreError(RuntimeError):
    """The vector store cannot be opened or used."""


class VectorStoreLockedError(VectorStoreError):
    """Another process holds the local Qdrant folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        super().__init__(
            f"the vector store folder {folder} is in use by another CodeWeaver process "
            "(local Qdrant allows one process per folder). Stop that process (e.g. a running "
            "`codeweaver chat` or server) and try again, or run a Qdrant server and set "
            "QDRANT_URL so several processes can share it."
        )


_CLIENTS: dict[str, QdrantClient] = {}
_CLIENTS_LOCK = threading.Lock()
# Local mode keeps collections in plain Python structures and writes through one SQLite
# connection, so calls on a shared local client are serialised per client.
_CALL_LOCKS: dict[str, threading.RLock] = {}
_ATEXIT_REGISTERED = False


@dataclass(frozen=True)
class StoreLocation:
    """Where vectors live: a local folder or a server URL."""

    key: str
    folder: Path | None = None
    url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # a secret: never printed

    @property
    def local(self) -> bool:
        return self.folder is not None

    def describe(self) -> str:
        return str(self.folder) if self.folder is not None else str(self.url)

    @classmethod
    def from_settings(cls, settings: Settings) -> StoreLocation:
        if settings.qdrant_url:
            key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            return cls(key=f"url:{settings.qdrant_url}", url=settings.qdrant_url, api_key=key)
        folder = Path(settings.qdrant_path).expanduser().resolve()
        return cls(key=f"path:{folder}", folder=folder)


def shared_client(location: StoreLocation) -> QdrantClient:
    """The process-wide client for `location`, opened on first use."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(location.key)
        if client is not None:
            return client
        from qdrant_client import QdrantClient

        if location.folder is not None:
            location.folder.mkdir(parents=True, exist_ok=True)
            try:
                # Thread checks are off because calls are serialised by `_CALL_LOCKS` and
                # searches run in worker threads.
                client = QdrantClient(
                    path=str(location.folder), force_disable_check_same_thread=True
                )
            except RuntimeError as exc:
                if "already accessed by another instance" in str(exc):
                    raise VectorStoreLockedError(location.folder) from None
                raise VectorStoreError(f"cannot open {location.folder}: {exc}") from exc
        else:
            client = QdrantClient(url=location.url, api_key=location.api_key, timeout=10)
        global _ATEXIT_REGISTERED
        if not _ATEXIT_REGISTERED:
            # Closing at interpreter shutdown fails noisily inside qdrant-client; close first.
            atexit.register(close_shared_clients)
            _ATEXIT_REGISTERED = True
        _CLIENTS[location.key] = client
        _CALL_LOCKS[location.key] = threading.RLock()
        return client


def close_shared_clients() -> None:
    """Close every shared client, releasing local folders (tests, shutdown)."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            # Closing is best effort: the folder's lock goes with the process anyway.
            with contextlib.suppress(Exception):
                client.close()
        _CLIENTS.clear()
        _CALL_LOCKS.clear()


@contextlib.contextmanager
def _guarded(location: StoreLocation) -> Iterator[None]:
    """Serialise calls on the location's client; report server failures as VectorStoreError."""
    from qdrant_client.http.exceptions import ApiException

    shared_client(location)  # (re)opens the client and its lock if they were closed
    with _CALL_LOCKS[location.key]:
        try:
            yield
        except ApiException as exc:
            raise VectorStoreError(f"Qdrant at {location.describe()} failed: {exc}") from exc


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
    score: float
    payload: Payload


class VectorCollection:
    """One cosine-distance collection of a fixed dimension."""

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
        shared_client(location)  # fail now (e.g. locked), not on first use

    @property
    def client(self) -> QdrantClient:
        # Looked up on each use, so the collection survives `close_shared_clients()`.
        return shared_client(self.location)

    @classmethod
    def open(
        cls,
        settings: Settings,
        purpose: str,
        model: str,
        dimension: int,
        keyword_fields: Sequence[str] = (),
    ) -> VectorCollection:
        return cls(
            StoreLocation.from_settings(settings),
            collection_name(purpose, model, dimension),
            dimension,
            keyword_fields,
        )

    def exists(self) -> bool:
        with _guarded(self.location):
            return bool(self.client.collection_exists(self.name))

    def ensure(self) -> None:
        """Create the collection (and, on a server, its payload indexes) if missing."""
        from qdrant_client.http import models

        with _guarded(self.location):
            if self.client.collection_exists(self.name):
                return
            self.client.create_collection(
                self.name,
                vectors_config=models.VectorParams(
                    size=self.dimension, distance=models.Distance.COSINE
                ),
            )
            # Local mode ignores payload indexes (and warns); a server uses them for filters.
            if not self.location.local:
                for name in self.keyword_fields:
                    self.client.create_payload_index(
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
        with _guarded(self.location):
            self.client.upsert(self.name, points=points, wait=True)

    def query(
        self, vector: NDArray[np.float32], limit: int, where: Where | None = None
    ) -> list[Hit]:
        if not self.exists():
            return []
        with _guarded(self.location):
            response = self.client.query_points(
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
        with _guarded(self.location):
            self.client.delete(
                self.name, points_selector=models.FilterSelector(filter=flt), wait=True
            )

    def delete_ids(self, ids: Sequence[str]) -> None:
        from qdrant_client.http import models

        if not ids or not self.exists():
            return
        with _guarded(self.location):
            self.client.delete(
                self.name, points_selector=models.PointIdsList(points=list(ids)), wait=True
            )

    def count(self, where: Where | None = None) -> int:
        if not self.exists():
            return 0
        with _guarded(self.location):
            return int(self.client.count(self.name, count_filter=_filter(where), exact=True).count)

    def scroll(
        self, where: Where | None = None, fields: Sequence[str] | None = None, page: int = 1024
    ) -> Iterator[tuple[str, Payload]]:
        """Every matching point's id and payload (only `fields` when given), page by page."""
        if not self.exists():
            return
        offset: Any = None
        selector: bool | list[str] = list(fields) if fields is not None else True
        while True:
            with _guarded(self.location):
                records, offset = self.client.scroll(
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


def list_collections(location: StoreLocation, prefix: str = "") -> list[str]:
    client = shared_client(location)
    with _guarded(location):
        names = [c.name for c in client.get_collections().collections]
    return sorted(n for n in names if n.startswith(prefix))


def count_points(location: StoreLocation, name: str) -> int:
    client = shared_client(location)
    with _guarded(location):
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
