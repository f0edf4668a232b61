"""A file's stored versions, and the one readers see of them: its newest whole one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeweaver.memory.vector_store import Hit, Payload, VectorCollection

# What tells a file's versions apart, and which one readers see.
VERSION_FIELDS = ("path", "sha256", "chunks", "indexed_at")


@dataclass
class Version:
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


def versions_by_file(points: Iterable[tuple[str, Payload]]) -> dict[str, list[Version]]:
    """Stored chunks by file path, then by version."""
    found: dict[str, dict[str, Version]] = {}
    for pid, payload in points:
        versions = found.setdefault(str(payload.get("path", "")), {})
        version = versions.setdefault(str(payload.get("sha256", "")), Version(payload))
        version.ids.append(pid)
    return {path: list(versions.values()) for path, versions in found.items()}


def current_version(versions: Sequence[Version]) -> Version:
    """The version of a file readers see: its newest whole one. A run killed while it
    wrote a version, or deleted the one before, leaves that version partial. None whole
    happens only to a reader whose scroll crossed a change: it gets the newest."""
    return max(versions, key=Version.order)


def hidden_chunks(files: dict[str, list[Version]]) -> frozenset[str]:
    """The ids of every chunk outside its file's current version."""
    current = {path: current_version(versions) for path, versions in files.items()}
    return frozenset(
        pid
        for path, versions in files.items()
        for version in versions
        if version is not current[path]
        for pid in version.ids
    )


def visible_points(
    points: Iterable[tuple[str, Payload]], hidden: frozenset[str]
) -> Iterator[tuple[str, Payload]]:
    """The `points` readers see: those not `hidden`."""
    return ((pid, payload) for pid, payload in points if pid not in hidden)


class CurrentChunks:
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
class Indexed:
    """What is indexed of one file."""

    sha256: str = ""  # of the version readers see
    display: str = ""
    ids: list[str] = field(default_factory=list)  # every version's
    current: list[str] = field(default_factory=list)  # the version readers see
    # False when the version readers see may be partial: chunks stored before versions
    # counted their chunks, beside another version of the file. Such a file is rewritten.
    sure: bool = True


def manifest(collection: VectorCollection) -> dict[str, Indexed]:
    """What is indexed now, by file path: the version readers see, and every id."""
    found: dict[str, Indexed] = {}
    points = collection.scroll(fields=[*VERSION_FIELDS, "display_path"])
    for path, versions in versions_by_file(points).items():
        current = current_version(versions)
        found[path] = Indexed(
            sha256=str(current.payload.get("sha256", "")),
            display=str(current.payload.get("display_path", "")),
            ids=[pid for version in versions for pid in version.ids],
            current=current.ids,
            sure=current.total is not None or len(versions) == 1,
        )
    return found
