"""What the knowledge base returns: per-file outcomes, indexed files and search hits."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# `skipped`: deliberately not read (a symlink out of the folder, a FIFO); `failed`: could
# not be read or indexed (missing, unreadable, binary).
Outcome = Literal["added", "updated", "unchanged", "removed", "skipped", "failed"]
OUTCOMES: tuple[Outcome, ...] = ("added", "updated", "unchanged", "removed", "skipped", "failed")


@dataclass(frozen=True)
class FileResult:
    """What happened to one file (or one given path that could not be used)."""

    path: str
    display_path: str
    outcome: Outcome
    chunks: int = 0
    reason: str = ""


@dataclass
class IndexReport:
    """The result of `add` or `remove`: never raised, every problem is a `failed` entry."""

    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0

    def of(self, outcome: Outcome) -> list[FileResult]:
        return [f for f in self.files if f.outcome == outcome]

    def counts(self) -> dict[str, int]:
        return {name: len(self.of(name)) for name in OUTCOMES}

    @property
    def chunks_written(self) -> int:
        return sum(f.chunks for f in self.files if f.outcome in ("added", "updated"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts(),
            "chunks_written": self.chunks_written,
            "seconds": round(self.seconds, 3),
            "files": [asdict(f) for f in self.files],
        }


@dataclass(frozen=True)
class IndexedFile:
    path: str
    display_path: str
    title: str
    chunks: int
    indexed_at: float
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KbHit:
    """One chunk found by `KnowledgeBase.search`.

    `score` is a relevance in [0, 1]: the fused reciprocal-rank score over its maximum (1.0
    when the chunk is first by both vectors and BM25, see `codeweaver.kb.search.fuse`). The
    1-based ranks say which side found it (None: not among that side's candidates).
    """

    path: str
    display_path: str
    title: str
    text: str
    chunk_index: int
    start_line: int
    page: int | None
    score: float
    dense_rank: int | None = None
    lexical_rank: int | None = None
