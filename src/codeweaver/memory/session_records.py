"""What a session is: its id rule, its owner, its turns, and the index that keeps them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TITLE_CHARS = 80
DEFAULT_OWNER = "default"  # the one user of a server without per-user tokens


# What a claim found: the row was created for the claimant, was already theirs, or is
# another user's.
Claim = Literal["new", "owned", "foreign"]


class SessionOwnerError(LookupError):
    """The session belongs to another user."""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    turns: int
    created: float
    updated: float
    owner: str = DEFAULT_OWNER

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "messages": self.turns * 2,  # a question and its answer per turn
            "created": self.created,
            "updated": self.updated,
        }


@dataclass(frozen=True)
class Turn:
    session_id: str
    turn: int
    question: str
    answer: str
    sources: list[dict[str, Any]] = field(default_factory=list)
    cache_keys: tuple[str, ...] = ()
    mode: str = "pipeline"
    created: float = 0.0


class SessionIndex(Protocol):
    async def record_turn(
        self,
        session_id: str,
        question: str,
        answer: str,
        sources: list[dict[str, Any]],
        cache_keys: Sequence[str],
        mode: str,
        owner: str = DEFAULT_OWNER,
    ) -> Turn: ...

    async def claim(self, session_id: str, owner: str) -> Claim: ...

    async def release(self, session_id: str, owner: str) -> bool: ...

    async def sessions(self, owner: str, limit: int = 100) -> list[SessionInfo]: ...

    async def session(self, session_id: str) -> SessionInfo | None: ...

    async def turns(self, session_id: str) -> list[Turn]: ...

    async def delete(self, session_id: str) -> bool: ...

    async def record_feedback(
        self, session_id: str, turn: int, owner: str, rating: str, cache_removed: bool
    ) -> None: ...


def title_of(question: str) -> str:
    line = " ".join(question.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
