"""`/api/sessions`: the asker's sessions, one session's history, deleting one."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Response
from fastapi import Path as PathParam

from codeweaver.api.conversations import SessionNotFoundError, StoreUnavailableError
from codeweaver.api.responses import SessionDetail, SessionSummary
from codeweaver.api.schemas import SESSION_PATTERN, Service, User, error_docs

SessionId = Annotated[str, PathParam(pattern=SESSION_PATTERN, description="A session id.")]

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.get("", responses=error_docs(401, 421, 422), response_model=list[SessionSummary])
async def list_sessions(chat: Service, user: User, limit: int = 100) -> list[dict[str, Any]]:
    """Your sessions, most recently updated first."""
    return [s.to_dict() for s in await chat.sessions(max(1, min(limit, 1000)), user)]


@router.get("/{session_id}", responses=error_docs(401, 404, 421, 422), response_model=SessionDetail)
async def get_session(session_id: SessionId, chat: Service, user: User) -> dict[str, Any]:
    """One of your sessions: its messages, answers with their sources."""
    try:
        info, messages = await chat.history(session_id, user)
    except SessionNotFoundError:
        raise HTTPException(404, f"no session {session_id}") from None
    return {**info.to_dict(), "history": messages}


@router.delete("/{session_id}", status_code=204, responses=error_docs(401, 403, 404, 421, 422, 503))
async def delete_session(session_id: SessionId, chat: Service, user: User) -> Response:
    """Delete one of your sessions, its index entry and its thread state."""
    try:
        await chat.delete(session_id, user)
    except SessionNotFoundError:
        raise HTTPException(404, f"no session {session_id}") from None
    except StoreUnavailableError as exc:
        raise HTTPException(503, str(exc)) from None
    return Response(status_code=204)
