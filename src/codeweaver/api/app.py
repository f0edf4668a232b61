"""FastAPI application: JSON and SSE endpoints over `ChatService`, and the web page at `/`.

`create_app` opens the thread store and builds the dependencies in its lifespan, so tests
pass their own settings and a scripted model, and `codeweaver serve` the configured ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from codeweaver.agent.librarian import MAX_STEPS
from codeweaver.agent.runner import MAX_QUESTION_CHARS, Assistant, InvalidQuestionError, Mode
from codeweaver.api.queue import QueueFullError, RunQueue
from codeweaver.api.security import BodyLimitMiddleware, RateLimiter, bearer_guard, client_key
from codeweaver.api.service import (
    ChatService,
    ServiceEvent,
    SessionNotFoundError,
    TurnNotFoundError,
)
from codeweaver.config import Settings
from codeweaver.memory.sessions import SESSION_ID, ThreadStore, open_thread_store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.deps import Deps

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
SESSION_PATTERN = SESSION_ID.pattern
HEALTH_REFRESH_SECONDS = 30.0
SessionId = Annotated[str, PathParam(pattern=SESSION_PATTERN, description="A session id.")]


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


class FeedbackRequest(BaseModel):
    session_id: str = Field(pattern=SESSION_PATTERN)
    turn: int = Field(ge=1, description="The turn number from `done` or the history.")
    rating: Literal["up", "down"]


def _service(request: Request) -> ChatService:
    return request.app.state.service  # type: ignore[no-any-return]


# Module level: FastAPI resolves these annotations by name.
Service = Annotated[ChatService, Depends(_service)]


def _concurrency(settings: Settings) -> int:
    if settings.api_concurrency is not None:
        return settings.api_concurrency
    return 1 if settings.provider == "local" else 8


def create_app(
    settings: Settings | None = None,
    *,
    llm: BaseChatModel | None = None,
    deps: Deps | None = None,
    ping_seconds: float = 15.0,
) -> FastAPI:
    """The app; `deps` (or just `llm`) replaces what the settings would build (tests)."""
    settings = settings or Settings()
    health: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from codeweaver.factory import build_deps, prepare_sources

        async with open_thread_store(settings) as store:
            built = (
                deps if deps is not None else await asyncio.to_thread(build_deps, settings, llm=llm)
            )
            problems = await asyncio.to_thread(prepare_sources, built)
            for problem in problems:
                logger.warning("source preparation: %s", problem)
            assistant = Assistant(built, checkpointer=store.checkpointer)
            queue = RunQueue(_concurrency(settings), settings.api_queue)
            app.state.service = ChatService(assistant, store, queue)
            health.update(await asyncio.to_thread(_static_health, settings, built, store))
            refresher = asyncio.create_task(_refresh_sources(health, built))
            try:
                yield
            finally:
                refresher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refresher

    app = FastAPI(
        title="CodeWeaver",
        version=_version(),
        summary="Answers developers' questions from many sources at once, with citations.",
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimitMiddleware, limit=settings.api_max_body)
    if settings.cors_origin_list:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    token = settings.api_token.get_secret_value() if settings.api_token else None
    guard = Depends(bearer_guard(token))
    limiter = RateLimiter(settings.api_rate_per_minute)

    def limited(request: Request) -> None:
        limiter.check(client_key(request))

    @app.get("/api/health", tags=["service"])
    async def get_health(chat: Service) -> dict[str, Any]:
        """Status, model, sources and stores; never a key's value."""
        return {**health, "status": "ok", "queue": chat.queue.snapshot()}

    @app.post("/api/chat", tags=["chat"], dependencies=[guard, Depends(limited)])
    async def post_chat(body: ChatRequest, chat: Service) -> dict[str, Any]:
        """Answer one message; the reply holds the answer, numbered sources and steps."""
        question, ticket = _reserve(chat, body.message)
        # Closed explicitly, so the slot is given back as soon as the answer is done.
        async with contextlib.aclosing(
            chat.stream(question, ticket, body.session_id, body.mode)
        ) as events:
            async for event in events:
                if event.kind == "done":
                    return event.data
                if event.kind == "error":
                    code = 503 if event.data["retryable"] else 422
                    raise HTTPException(code, event.data["message"])
        raise HTTPException(500, "the run ended without an answer")  # pragma: no cover

    @app.post("/api/chat/stream", tags=["chat"], dependencies=[guard, Depends(limited)])
    async def post_chat_stream(body: ChatRequest, chat: Service) -> EventSourceResponse:
        """Server-Sent Events: `queue`, `think`, `act`, `observe`, `token`, then `done` or
        `error`. Event ids count from 1; a comment line pings every 15 s. Closing the
        connection cancels the run."""
        question, ticket = _reserve(chat, body.message)
        events = chat.stream(question, ticket, body.session_id, body.mode)
        return EventSourceResponse(_sse(events), ping=ping_seconds)

    @app.get("/api/sessions", tags=["sessions"], dependencies=[guard])
    async def list_sessions(chat: Service, limit: int = 100) -> list[dict[str, Any]]:
        """Sessions, most recently updated first."""
        return [s.to_dict() for s in await chat.sessions(max(1, min(limit, 1000)))]

    @app.get("/api/sessions/{session_id}", tags=["sessions"], dependencies=[guard])
    async def get_session(session_id: SessionId, chat: Service) -> dict[str, Any]:
        """A session's messages, answers with their sources."""
        try:
            info, messages = await chat.history(session_id)
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {session_id}") from None
        return {**info.to_dict(), "history": messages}

    @app.delete(
        "/api/sessions/{session_id}", tags=["sessions"], status_code=204, dependencies=[guard]
    )
    async def delete_session(session_id: SessionId, chat: Service) -> Response:
        """Delete a session, its index entry and its thread state."""
        try:
            await chat.delete(session_id)
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {session_id}") from None
        return Response(status_code=204)

    @app.post("/api/feedback", tags=["chat"], dependencies=[guard, Depends(limited)])
    async def post_feedback(body: FeedbackRequest, chat: Service) -> dict[str, Any]:
        """Thumbs up or down on an answer; down removes it from the answer cache."""
        try:
            removed = await chat.feedback(body.session_id, body.turn, body.rating)
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {body.session_id}") from None
        except TurnNotFoundError:
            raise HTTPException(404, f"session {body.session_id} has no turn {body.turn}") from None
        return {"ok": True, "cache_removed": removed}

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=_PAGE_HEADERS)

    app.mount("/static", _RevalidatedStatic(directory=STATIC), name="static")
    return app


class _RevalidatedStatic(StaticFiles):
    """The page's modules must never mix versions after an upgrade: revalidate each load."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


# The page loads only its own script and style; nothing inline runs.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _reserve(chat: ChatService, message: str) -> tuple[str, Any]:
    try:
        return chat.reserve(message)
    except InvalidQuestionError as exc:
        too_long = len(message.strip()) > MAX_QUESTION_CHARS
        raise HTTPException(413 if too_long else 422, str(exc)) from None
    except QueueFullError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None


async def _sse(events: AsyncIterator[ServiceEvent]) -> AsyncIterator[dict[str, str]]:
    numbers = itertools.count(1)
    async for event in events:
        data = json.dumps(event.data, ensure_ascii=False, default=str)
        yield {"event": event.kind, "id": str(next(numbers)), "data": data}


def _version() -> str:
    try:
        return metadata.version("codeweaver")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "0"


def _source_states(deps: Any) -> dict[str, str]:
    return {name: str(source.status()) for name, source in deps.sources.items()}


def _static_health(settings: Settings, deps: Any, store: ThreadStore) -> dict[str, Any]:
    from codeweaver.memory.store_clients import StoreLocation

    vectors = StoreLocation.from_settings(settings)
    return {
        "version": _version(),
        "model": settings.model,
        "provider": settings.provider,
        "sources": _source_states(deps),
        "stores": {
            "threads": store.backend,
            "cache": settings.cache_mode if settings.cache_enabled else "off",
            "vectors": "qdrant-local" if vectors.local else "qdrant-server",
        },
        "checked": time.time(),
    }


async def _refresh_sources(health: dict[str, Any], deps: Any) -> None:
    """Source states change (keys, indexes, a locked store): refresh them off the loop."""
    while True:
        await asyncio.sleep(HEALTH_REFRESH_SECONDS)
        try:
            states = await asyncio.to_thread(_source_states, deps)
        except Exception as exc:  # health must keep answering
            logger.warning("source status refresh failed: %s", exc)
            continue
        health["sources"] = states
        health["checked"] = time.time()
