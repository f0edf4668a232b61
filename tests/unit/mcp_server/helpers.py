"""Shared pieces of the MCP tests: a service over fake sources, scripted answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from codeweaver.agent.runner import Assistant
from codeweaver.api.queue import RunQueue
from codeweaver.api.service import ChatService
from codeweaver.memory.sessions import open_thread_store
from codeweaver.sources.base import Source, SourceStatus
from codeweaver.vocabulary import Intent, SearchResult
from tests.fakes import FakeSource, doc, make_deps

ANSWER = "Use `open()` and iterate over the file [1]. Each line keeps its newline [2]."
SCRIPT: dict[str, Any] = {
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}
QUESTION = "How do I read a file line by line in Python?"


class SkippedSource:
    """A configured source that cannot run (e.g. its key is missing)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def status(self) -> SourceStatus:
        return SourceStatus("skipped", self.reason)

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        raise AssertionError("a skipped source must not be searched")


def default_sources() -> list[Source]:
    return [FakeSource(results=[doc(1), doc(2)])]


@asynccontextmanager
async def chat_service(
    tmp_path: Path, sources: Sequence[Source] | None = None, waiting: int = 4
) -> AsyncIterator[ChatService]:
    deps, _ = make_deps(tmp_path, SCRIPT, sources=list(sources or default_sources()))
    async with open_thread_store(deps.settings) as store:
        assistant = Assistant(deps, checkpointer=store.checkpointer)
        yield ChatService(assistant, store, RunQueue(1, waiting))
