"""Request bodies, error documentation and the dependencies the API's routers share.

Kept apart from `app.py` so every router (`routes/`, `openai_compat`) uses the same user,
service and rate-limit dependencies without importing the app factory.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends, Request
from pydantic import BaseModel, Field

from codeweaver.agent.librarian import MAX_STEPS
from codeweaver.agent.rules.input_check import Mode
from codeweaver.api.auth import TokenTable
from codeweaver.api.rate_limit import RequestLimiter, client_address, rate_key
from codeweaver.api.service import ChatService
from codeweaver.memory.sessions import SESSION_ID

SESSION_PATTERN = SESSION_ID.pattern


class ChatRequest(BaseModel):
    message: str = Field(description="The question.", examples=["How do I read a file?"])
    session_id: str | None = Field(
        default=None, pattern=SESSION_PATTERN, description="Continue this session."
    )
    mode: Mode = Field(
        default="pipeline",
        description="How to answer: `pipeline` (plan, parallel search, checked answer) or "
        f"`librarian` (a tool-using loop of at most {MAX_STEPS} steps). Both continue the "
        "same session.",
    )


class ErrorBody(BaseModel):
    detail: str | list[dict[str, Any]] = Field(description="What was wrong.")


_ERRORS = {
    400: "The request could not be read.",
    401: "A token is required and was missing or wrong.",
    403: "Sent by a web page of another origin.",
    404: "No such session (or it is another user's), or no such turn.",
    413: "The body or the question is too long.",
    421: "The Host header names a host this server does not answer for.",
    422: "The request is not valid.",
    429: "Over the per-minute budget; `Retry-After` says when to try again.",
    503: "Busy, or the conversation store cannot be used; the detail says which.",
}


def error_docs(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error codes a route can answer."""
    return {code: {"model": ErrorBody, "description": _ERRORS[code]} for code in codes}


CHAT_ERRORS = error_docs(400, 401, 403, 404, 413, 421, 422, 429, 503)


class FeedbackRequest(BaseModel):
    session_id: str = Field(pattern=SESSION_PATTERN)
    turn: int = Field(ge=1, description="The turn number from `done` or the history.")
    rating: Literal["up", "down"]


async def _service(request: Request) -> ChatService:
    """The service, waiting for it while it starts (`startup.ServiceStartup`)."""
    return await request.app.state.starting.service()  # type: ignore[no-any-return]


def _user(request: Request) -> str:
    """The request's user (401 when a token is required and not right)."""
    tokens: TokenTable = request.app.state.tokens
    return tokens.authenticate(request)


# Module level: FastAPI resolves these annotations by name.
Service = Annotated[ChatService, Depends(_service)]
User = Annotated[str, Depends(_user)]


async def limited(request: Request, user: User) -> None:
    """The per-minute budget (429 beyond): per user with tokens, else per client."""
    tokens: TokenTable = request.app.state.tokens
    limiter: RequestLimiter = request.app.state.limiter
    who = user if tokens.required else None
    await limiter.check(rate_key(who, client_address(request, request.app.state.proxies)))
