"""Qdrant clients shared per location, and a local folder handed between processes.

Qdrant local mode lets one client at a time open a folder. Within a process
one client is shared per folder and its calls are serialised. Between processes the
folder is handed over: a process that finds it taken leaves a request file in the folder
and waits; the holder closes its client between two calls when it sees a request, and
opens it again (asking in turn) on its next call. So `codeweaver serve` and the CLI can
work on one data directory. A holder that does not take part (a Qdrant client outside
CodeWeaver) or stays busy past the wait gives `VectorStoreLockedError`, which names it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Defined with the backend interface; imported from here by older code.
from codeweaver.memory.vector_store import VectorStoreError as VectorStoreError

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from codeweaver.config import Settings

_REQUEST_FILE = ".codeweaver-request"
_HOLDER_FILE = ".codeweaver-holder"
_QDRANT_LOCK_FILE = ".lock"
_POLL_SECONDS = 0.05
_WATCH_SECONDS = 0.1


class VectorStoreLockedError(VectorStoreError):
    """Another process holds the local Qdrant folder and did not hand it over."""

    def __init__(self, folder: Path, holder: str | None = None, waited: float = 0.0) -> None:
        self.folder = folder
        self.holder = holder
        who = (
            f"CodeWeaver process {holder}, which stayed busy for {waited:.0f} s"
            if holder
            else "another process that does not share it (a Qdrant client outside "
            "CodeWeaver, or an older CodeWeaver)"
        )
        super().__init__(
            f"the vector store folder {folder} is in use by {who} (local Qdrant opens a "
            "folder in one process at a time). Stop that process and try again, raise "
            "CODEWEAVER_STORE_WAIT, or run a Qdrant server and set QDRANT_URL so several "
            "processes can share it."
        )


@dataclass(frozen=True)
class StoreLocation:
    """Where vectors live: a local folder or a server URL."""

    key: str
    folder: Path | None = None
    url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # a secret: never printed
    # How long to wait for another process to hand a local folder over.
    wait_seconds: float = field(default=10.0, compare=False)

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
        return cls(key=f"path:{folder}", folder=folder, wait_seconds=settings.store_wait)


class _Handle:
    """One location's client, opened on demand and (if local) released on request."""

    def __init__(self, location: StoreLocation) -> None:
        self.location = location
        self.lock = threading.RLock()
        self.client: QdrantClient | None = None
        self.opened_at = 0.0

    def open(self) -> QdrantClient:
        """The client, (re)opened if needed; the caller holds `self.lock`."""
        if self.client is None:
            self.client = _open(self.location)
            self.opened_at = time.time()
        return self.client

    def close(self) -> None:
        with self.lock:
            if self.client is not None:
                # Best effort: the folder's lock goes with the process anyway.
                with contextlib.suppress(Exception):
                    self.client.close()
                self.client = None

    def hand_over_if_asked(self) -> None:
        """Close between calls if another process asked for the folder since we opened it."""
        folder = self.location.folder
        if folder is None or self.client is None or not _asked_since(folder, self.opened_at):
            return
        if self.lock.acquire(blocking=False):  # never in the middle of a call
            try:
                self.close()
            finally:
                self.lock.release()


_HANDLES: dict[str, _Handle] = {}
_HANDLES_LOCK = threading.Lock()
_watcher: threading.Thread | None = None


def _handle(location: StoreLocation) -> _Handle:
    global _watcher
    with _HANDLES_LOCK:
        handle = _HANDLES.get(location.key)
        if handle is None:
            handle = _HANDLES[location.key] = _Handle(location)
            if len(_HANDLES) == 1:
                # Closing at interpreter shutdown fails noisily inside qdrant-client.
                atexit.register(close_shared_clients)
        if location.local and _watcher is None:
            _watcher = threading.Thread(target=_watch, name="codeweaver-store", daemon=True)
            _watcher.start()
        return handle


def _watch() -> None:
    while True:
        time.sleep(_WATCH_SECONDS)
        with _HANDLES_LOCK:
            handles = list(_HANDLES.values())
        for handle in handles:
            handle.hand_over_if_asked()


def shared_client(location: StoreLocation) -> QdrantClient:
    """The process-wide client for `location`, opened on first use."""
    handle = _handle(location)
    with handle.lock:
        return handle.open()


@contextlib.contextmanager
def using(location: StoreLocation) -> Iterator[QdrantClient]:
    """The location's client for one call: serialised in the process, and a local folder
    is not handed to another process until the block ends. Server failures become
    `VectorStoreError`."""
    from qdrant_client.http.exceptions import ApiException

    handle = _handle(location)
    with handle.lock:
        client = handle.open()
        try:
            yield client
        except ApiException as exc:
            raise VectorStoreError(f"Qdrant at {location.describe()} failed: {exc}") from exc


def close_shared_clients() -> None:
    """Close every shared client, releasing local folders (tests, shutdown)."""
    with _HANDLES_LOCK:
        handles = list(_HANDLES.values())
    for handle in handles:
        handle.close()


def _open(location: StoreLocation) -> QdrantClient:
    from qdrant_client import QdrantClient

    if location.folder is None:
        return QdrantClient(url=location.url, api_key=location.api_key, timeout=10)
    folder = location.folder
    folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + location.wait_seconds
    while True:
        # Probe Qdrant's own lock first: opening reads every collection before locking.
        if _folder_free(folder):
            try:
                # Thread checks are off because calls are serialised by the handle's lock
                # and searches run in worker threads.
                client = QdrantClient(path=str(folder), force_disable_check_same_thread=True)
            except Exception as exc:  # corrupt JSON or SQLite files, permissions, …
                if "already accessed" not in str(exc):
                    raise VectorStoreError(
                        f"cannot open the vector store {folder}: {type(exc).__name__}: {exc}. "
                        "Its files were left untouched; move the folder aside to start an "
                        "empty store (the knowledge base can be re-indexed)."
                    ) from exc
            else:
                _write_holder(folder)
                return client
        if time.monotonic() >= deadline:
            raise VectorStoreLockedError(folder, _holder(folder), location.wait_seconds)
        _ask(folder)
        time.sleep(_POLL_SECONDS)


def _folder_free(folder: Path) -> bool:
    import portalocker

    lock_file = folder / _QDRANT_LOCK_FILE
    if not lock_file.exists():
        return True
    try:
        with lock_file.open("r+") as handle:
            flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
            portalocker.lock(handle, flags)
            portalocker.unlock(handle)
    except (portalocker.exceptions.LockException, OSError):
        return False
    return True


def _ask(folder: Path) -> None:
    with contextlib.suppress(OSError):
        (folder / _REQUEST_FILE).write_text(str(os.getpid()), encoding="utf-8")


def _asked_since(folder: Path, opened_at: float) -> bool:
    try:
        return (folder / _REQUEST_FILE).stat().st_mtime > opened_at
    except OSError:
        return False


def _write_holder(folder: Path) -> None:
    record = {"pid": os.getpid(), "command": " ".join(sys.argv)[:200], "since": time.time()}
    with contextlib.suppress(OSError):
        (folder / _HOLDER_FILE).write_text(json.dumps(record), encoding="utf-8")


def _holder(folder: Path) -> str | None:
    """ "pid 123 (`codeweaver serve`)" when a live CodeWeaver process opened it last."""
    try:
        record: dict[str, Any] = json.loads((folder / _HOLDER_FILE).read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid == os.getpid() or not _alive(pid):
        return None
    return f"{pid} (`{record.get('command', '?')}`)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
