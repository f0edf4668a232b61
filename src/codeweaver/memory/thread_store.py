"""A thread store: the checkpointer and the session index of one database, and its locks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codeweaver.memory.session_records import SessionIndex
from codeweaver.memory.thread_locks import ThreadLocks

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


@dataclass
class ThreadStore:
    """The checkpointer and the session index of one database, and its thread locks."""

    checkpointer: BaseCheckpointSaver[Any]
    index: SessionIndex
    backend: str  # "sqlite" or "postgresql"
    locks: ThreadLocks = field(default_factory=ThreadLocks)

    async def delete(self, session_id: str) -> bool:
        existed = await self.index.delete(session_id)
        await self.checkpointer.adelete_thread(session_id)
        return existed
