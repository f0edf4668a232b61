"""The recorded conversations of the service: listing, history, deletion and ratings,
with the errors every door maps to its own status codes. `ChatService` answers; this
part reads and manages what its answers left.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from codeweaver.api.render import render_answer
from codeweaver.memory.sessions import DEFAULT_OWNER, SESSION_ID, SessionInfo, ThreadStore
from codeweaver.presentation.sources import source_views
from codeweaver.words.language import detect_language

logger = logging.getLogger(__name__)


class SessionNotFoundError(KeyError):
    """No session has this id (or it is another user's: the same to the asker)."""


class StoreUnavailableError(RuntimeError):
    """The conversation store failed its check at start; the text says why."""


class ConversationBusyError(RuntimeError):
    """Another turn of the conversation ran for longer than a turn waits."""


class TurnNotFoundError(KeyError):
    """The session has no turn with this number."""


def public_sources(
    answer: str, sources: Sequence[Mapping[str, Any]], language: str = "en"
) -> list[dict[str, Any]]:
    """Numbered sources as every door shows them: cleaned fields, no snippets, only
    http(s) links, each marked cited or not."""
    return [view.to_dict() for view in source_views(answer, sources, language)]


def new_session_id() -> str:
    return uuid.uuid4().hex


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.match(session_id):
        raise ValueError("session_id must be 1-64 letters, digits, '-' or '_'")
    return session_id


class Conversations:
    """What the service keeps of its conversations, for their owners only."""

    store: ThreadStore
    store_problem: str | None

    @property
    def deps(self) -> Any:
        raise NotImplementedError

    def writable(self) -> None:
        """Raise `StoreUnavailableError` when nothing can be recorded."""
        if self.store_problem is not None:
            raise StoreUnavailableError(self.store_problem)

    async def sessions(self, limit: int = 100, owner: str = DEFAULT_OWNER) -> list[SessionInfo]:
        return await self.store.index.sessions(owner, limit)

    async def _owned(self, session_id: str, owner: str) -> SessionInfo:
        info = await self.store.index.session(check_session_id(session_id))
        if info is None or info.owner != owner:
            raise SessionNotFoundError(session_id)
        return info

    async def history(
        self, session_id: str, owner: str = DEFAULT_OWNER
    ) -> tuple[SessionInfo, list[dict[str, Any]]]:
        info = await self._owned(session_id, owner)
        messages: list[dict[str, Any]] = []
        for turn in await self.store.index.turns(session_id):
            messages.append({"role": "user", "content": turn.question, "turn": turn.turn})
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.answer,
                    "html": render_answer(turn.answer, len(turn.sources)),
                    "sources": public_sources(
                        turn.answer, turn.sources, detect_language(turn.question)
                    ),
                    "turn": turn.turn,
                    "mode": turn.mode,
                }
            )
        return info, messages

    async def delete(self, session_id: str, owner: str = DEFAULT_OWNER) -> None:
        self.writable()
        await self._owned(session_id, owner)
        if not await self.store.delete(session_id):
            raise SessionNotFoundError(session_id)

    async def feedback(
        self, session_id: str, turn_number: int, rating: str, owner: str = DEFAULT_OWNER
    ) -> bool:
        """Record a rating; a thumbs-down removes the answer from the cache. Only the
        session's owner, who received the answer, can rate it.

        Returns whether a cache entry was removed.
        """
        self.writable()
        await self._owned(session_id, owner)
        turns = await self.store.index.turns(session_id)
        turn = next((t for t in turns if t.turn == turn_number), None)
        if turn is None:
            raise TurnNotFoundError(turn_number)
        removed = False
        if rating == "down":
            for key in turn.cache_keys:
                removed |= await asyncio.to_thread(self.deps.cache.forget, key)
        await self.store.index.record_feedback(session_id, turn_number, owner, rating, removed)
        logger.info("feedback %s on %s turn %d by %s", rating, session_id, turn_number, owner)
        return removed
