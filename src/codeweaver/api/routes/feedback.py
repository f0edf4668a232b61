"""`/api/feedback`: a rating of an answer the asker received."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException

from codeweaver.api.conversations import (
    SessionNotFoundError,
    StoreUnavailableError,
    TurnNotFoundError,
)
from codeweaver.api.responses import FeedbackReply
from codeweaver.api.schemas import CHAT_ERRORS, FeedbackRequest, Service, User, limited

router = APIRouter(tags=["chat"])


@router.post(
    "/api/feedback",
    dependencies=[Depends(limited)],
    responses=CHAT_ERRORS,
    response_model=FeedbackReply,
)
async def post_feedback(body: FeedbackRequest, chat: Service, user: User) -> dict[str, Any]:
    """Thumbs up or down on an answer you received; down removes it from the cache."""
    try:
        removed = await chat.feedback(body.session_id, body.turn, body.rating, user)
    except SessionNotFoundError:
        raise HTTPException(404, f"no session {body.session_id}") from None
    except TurnNotFoundError:
        raise HTTPException(404, f"session {body.session_id} has no turn {body.turn}") from None
    except StoreUnavailableError as exc:
        raise HTTPException(503, str(exc)) from None
    return {"ok": True, "cache_removed": removed}
