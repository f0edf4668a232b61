"""Milvus clients shared per location (URI and token) within a process.

One `pymilvus.MilvusClient` per location, its calls serialised; for a Milvus Lite `.db`
file pymilvus runs the Lite engine in this process, which locks the file for other
processes until `close_shared_clients` releases it. pymilvus is imported on first use
only (the `milvus` extra).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.memory.vector_store import VectorStoreError

if TYPE_CHECKING:
    from pymilvus import MilvusClient

    from codeweaver.config import Settings

INSTALL = "pip install 'codeweaver[milvus]'"


@dataclass(frozen=True, repr=False)
class MilvusLocation:
    """A Milvus server or Zilliz Cloud URI, or a Milvus Lite file."""

    uri: str  # may hold credentials (`https://user:pass@host`): shown through `describe`
    token: str | None = None  # a secret: never printed

    def __repr__(self) -> str:
        return f"MilvusLocation({self.describe()!r})"

    @property
    def lite(self) -> bool:
        return self.uri.endswith(".db")

    def describe(self) -> str:
        if self.lite:
            return f"milvus-lite file {self.uri}"
        # Credentials may sit in the URI itself (`https://user:pass@host`).
        return f"milvus server {re.sub(r'//[^/@]*@', '//', self.uri)}"

    @classmethod
    def from_settings(cls, settings: Settings) -> MilvusLocation:
        token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
        uri = settings.milvus_uri or str(settings.milvus_lite_path)
        if uri.endswith(".db"):
            uri = str(Path(uri).expanduser().resolve())
        return cls(uri=uri, token=token)


class _Shared:
    """One client per location in this process; calls are serialised by `lock`."""

    def __init__(self, location: MilvusLocation) -> None:
        self.location = location
        self.lock = threading.RLock()
        self.client: MilvusClient | None = None
        # Collections loaded through this client: Milvus serves reads of loaded ones only.
        self.loaded: set[str] = set()

    def open(self) -> MilvusClient:
        if self.client is None:
            self.client = _connect(self.location)
            self.loaded.clear()
        return self.client

    def close(self) -> None:
        with self.lock:
            if self.client is not None:
                with contextlib.suppress(Exception):  # best effort, as at shutdown
                    self.client.close()
                self.client = None
            if self.location.lite:
                # The embedded server holds the file's lock until it is released.
                with contextlib.suppress(ImportError):
                    from milvus_lite.server_manager import (
                        server_manager_instance,
                    )

                    server_manager_instance.release_server(self.location.uri)


_SHARED: dict[MilvusLocation, _Shared] = {}
_SHARED_LOCK = threading.Lock()


def _shared(location: MilvusLocation) -> _Shared:
    with _SHARED_LOCK:
        shared = _SHARED.get(location)
        if shared is None:
            shared = _SHARED[location] = _Shared(location)
        return shared


def pymilvus_module() -> Any:
    """The pymilvus module, or a `VectorStoreError` saying how to install it."""
    try:
        import pymilvus
    except ImportError as exc:
        raise VectorStoreError(
            f"CODEWEAVER_VECTOR_STORE=milvus needs pymilvus and milvus-lite: {INSTALL}"
        ) from exc
    return pymilvus


@contextlib.contextmanager
def using(location: MilvusLocation) -> Iterator[MilvusClient]:
    """The location's client for one call; Milvus failures become `VectorStoreError`."""
    milvus_error = pymilvus_module().MilvusException

    shared = _shared(location)
    with shared.lock:
        client = shared.open()
        try:
            yield client
        except milvus_error as exc:
            if "not loaded" in str(exc).lower():  # a restarted server: load again next call
                shared.loaded.clear()
            raise VectorStoreError(f"Milvus at {_where(location)} failed: {exc}") from exc


def loaded_collections(location: MilvusLocation) -> set[str]:
    """The collections loaded through the location's current client (to add to)."""
    return _shared(location).loaded


def close_shared_clients() -> None:
    """Close every shared client and stop embedded Milvus Lite, releasing its files."""
    with _SHARED_LOCK:
        shared = list(_SHARED.values())
    for one in shared:
        one.close()


def _where(location: MilvusLocation) -> str:
    return location.describe().split(" ", 2)[-1]


class _NoMvccWarning(logging.Filter):
    """Milvus Lite has no MVCC timestamps, and pymilvus warns about it on every scroll."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "failed to get mvccTs" not in record.getMessage()


def _connect(location: MilvusLocation) -> MilvusClient:
    pymilvus = pymilvus_module()
    iterator_log = logging.getLogger("pymilvus.client.iterator.query_iterator")
    if not any(isinstance(f, _NoMvccWarning) for f in iterator_log.filters):
        iterator_log.addFilter(_NoMvccWarning())
    if location.lite:
        Path(location.uri).parent.mkdir(parents=True, exist_ok=True)
    try:
        client: MilvusClient = pymilvus.MilvusClient(
            uri=location.uri, token=location.token or "", timeout=10
        )
    except pymilvus.MilvusException as exc:
        if location.lite:
            raise VectorStoreError(
                f"cannot open the Milvus Lite file {location.uri}: {exc}. Milvus Lite "
                "opens a file in one process at a time: stop the process using it, or run "
                f"`python -m milvus_lite server --data-dir {location.uri} --host 127.0.0.1` "
                "and set MILVUS_URI=http://127.0.0.1:19530 so several processes share it."
            ) from exc
        raise VectorStoreError(f"cannot reach Milvus at {_where(location)}: {exc}") from exc
    return client
