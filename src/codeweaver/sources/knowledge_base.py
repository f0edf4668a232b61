"""The `knowledge_base` source: the team's indexed documents (`codeweaver index add PATH…`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from codeweaver.sources.base import (
    McpTool,
    PhaseProgress,
    SourceError,
    SourceInfo,
    SourceStatus,
    register_source,
)
from codeweaver.vocabulary import Intent, SearchResult

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.kb.report import KbHit
    from codeweaver.kb.store import KnowledgeBase

EMPTY_REASON = "knowledge base is empty (codeweaver index add PATH)"
# Other processes index too (the CLI beside the server, replicas sharing a vector
# server): a status is asked again after this long even if this process changed nothing.
STATUS_SECONDS = 5.0


class KnowledgeBaseSource:
    """Searches the knowledge base by meaning. Status never loads the embedding model."""

    name = "knowledge_base"
    offline = True  # the same query always finds the same: see `Source.offline`

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._status: SourceStatus | None = None
        self._status_generation = -1
        self._status_at = 0.0
        self._kb: KnowledgeBase | None = None

    def status(self) -> SourceStatus:
        from codeweaver.kb.changes import generation

        with self._lock:
            # Cached until this process changes the knowledge base or a few seconds pass;
            # a store that could not be opened is asked again next time.
            fresh = self._clock() - self._status_at < STATUS_SECONDS
            if self._status is not None and self._status_generation == generation() and fresh:
                return self._status
            status, lasting = self._check()
            self._status = status if lasting else None
            self._status_generation = generation()
            self._status_at = self._clock()
            return status

    def _check(self) -> tuple[SourceStatus, bool]:
        from codeweaver.kb.store import indexed_chunk_count
        from codeweaver.memory.store_clients import VectorStoreError

        try:
            chunks = indexed_chunk_count(self.settings)
        except VectorStoreError as exc:
            return SourceStatus("skipped", str(exc)), False
        except Exception as exc:  # e.g. an unreachable Qdrant server
            return SourceStatus("skipped", f"vector store unavailable: {exc}"), False
        if chunks == 0:
            return SourceStatus("skipped", EMPTY_REASON), True
        return SourceStatus("ready"), True

    def _knowledge_base(self) -> KnowledgeBase:
        with self._lock:
            if self._kb is None:
                from codeweaver.kb.store import KnowledgeBase

                self._kb = KnowledgeBase(self.settings)
            return self._kb

    def prepare(self, progress: PhaseProgress | None = None) -> None:
        """Load the embedding model up front, so the first search is not the slow one."""
        if not self.status().usable:
            return
        from codeweaver.embeddings.minilm import MiniLMEmbedder

        if progress:
            progress("loading embedding model", 0, 1)
        embedder = self._knowledge_base().embedder
        if isinstance(embedder, MiniLMEmbedder):
            embedder.load()
        if progress:
            progress("loading embedding model", 1, 1)

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        status = self.status()
        if not status.usable:
            raise SourceError(f"{self.name}: {status.reason}")
        try:
            hits = await asyncio.to_thread(self._knowledge_base().search, query, limit)
        except Exception as exc:
            raise SourceError(f"{self.name}: {exc}") from exc
        return [to_search_result(hit) for hit in hits]


def to_search_result(hit: KbHit) -> SearchResult:
    anchor = f"page={hit.page}" if hit.page else f"L{hit.start_line}"
    title = f"{hit.display_path} — {hit.title}" if hit.title else hit.display_path
    return SearchResult(
        title=title,
        url=f"{_file_uri(hit.path)}#{anchor}",
        snippet=hit.text,
        source="knowledge_base",
        score=min(max(hit.score, 0.0), 1.0),
        date=None,
        reference=f"kb:{hit.display_path}#{hit.chunk_index}",
    )


def _file_uri(path: str) -> str:
    from pathlib import Path

    try:
        return Path(path).as_uri()  # percent-encodes spaces and the like
    except ValueError:  # not absolute: should not happen, stored paths are resolved
        return f"file://{path}"


@register_source(
    "knowledge_base",
    SourceInfo(
        mcp_tool=McpTool(
            "search_knowledge_base",
            "Search the knowledge base",
            "Search the user's knowledge base (their own indexed notes and documents).",
        ),
        offline=True,
    ),
)
def create_knowledge_base_source(settings: Settings) -> KnowledgeBaseSource:
    return KnowledgeBaseSource(settings)
