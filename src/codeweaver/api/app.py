"""FastAPI application: JSON and SSE endpoints over `ChatService`, and the web page at `/`.

`create_app`'s lifespan opens the service as every door does (`startup.open_service`), so
tests pass their own settings and a scripted model, and `codeweaver serve` the configured
ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from sse_starlette import EventSourceResponse

from codeweaver.agent.rules.input_check import MAX_QUESTION_CHARS, InvalidQuestionError
from codeweaver.api.auth import TokenTable
from codeweaver.api.conversations import (
    SessionNotFoundError,
    StoreUnavailableError,
    TurnNotFoundError,
)
from codeweaver.api.errors import OpenAIGuardErrors, install_error_handlers, json_safe
from codeweaver.api.health import model_problem, refresh_health, static_health, version
from codeweaver.api.oauth import install_oauth
from codeweaver.api.openai_compat import openai_router
from codeweaver.api.openai_responses import responses_router
from codeweaver.api.queue import QueueFullError
from codeweaver.api.rate_limit import RequestLimiter, parse_networks
from codeweaver.api.schemas import (
    _CHAT_ERRORS,
    SESSION_PATTERN,
    ChatRequest,
    FeedbackRequest,
    Service,
    User,
    _errors,
    limited,
)
from codeweaver.api.security import (
    BodyLimitMiddleware,
    HostCheckMiddleware,
    OriginCheckMiddleware,
    SecurityHeadersMiddleware,
    allowed_hosts,
)
from codeweaver.api.service import ChatService, ServiceEvent
from codeweaver.api.startup import ServiceStartup, open_service
from codeweaver.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.deps import Deps

STATIC = Path(__file__).parent / "static"
SessionId = Annotated[str, PathParam(pattern=SESSION_PATTERN, description="A session id.")]


class AppExtension(Protocol):
    """Something served beside the API (the MCP endpoint): `install` adds its routes when
    the app is created, `lifespan` runs while it serves, after `app.state.service` is set.
    Extensions live in higher layers and are passed in, so this module never imports them."""

    def install(self, app: FastAPI) -> None: ...

    def lifespan(self, app: FastAPI) -> AbstractAsyncContextManager[None]: ...


def create_app(
    settings: Settings | None = None,
    *,
    llm: BaseChatModel | None = None,
    deps: Deps | None = None,
    ping_seconds: float = 15.0,
    bind_host: str = "127.0.0.1",
    extensions: Sequence[AppExtension] = (),
) -> FastAPI:
    """The app for a server bound to `bind_host`; `deps` (or just `llm`) replaces what
    the settings would build (tests). Raises `TokenFileError` for a bad tokens file."""
    settings = settings or Settings()
    health: dict[str, Any] = {}
    tokens = TokenTable.from_settings(settings)
    redis_url = settings.redis_url.get_secret_value() if settings.redis_url else None
    limiter = RequestLimiter(settings.api_rate_per_minute, redis_url)
    proxies = parse_networks(settings.trusted_proxy_list)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Only what answers health and admits questions happens before listening; the
        # service itself is built in the background (`open_service`).
        if limiter.shared:
            await limiter.check_store()
        async with AsyncExitStack() as stack:
            starting = await stack.enter_async_context(open_service(settings, llm=llm, deps=deps))
            app.state.starting = starting
            health.update(
                await asyncio.to_thread(
                    static_health, settings, None, starting.store, starting.model_server
                )
            )
            refresher = asyncio.create_task(refresh_health(health, starting, settings))
            try:
                for extension in extensions:
                    await stack.enter_async_context(extension.lifespan(app))
                yield
            finally:
                refresher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refresher

    app = FastAPI(
        title="CodeWeaver",
        version=version(),
        summary="Answers developers' questions from many sources at once, with citations.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    # Innermost: verifies an identity provider's access token (when configured) for
    # `TokenTable.authenticate`, after the Host, Origin and size checks.
    install_oauth(app, tokens.oauth, tokens.is_static)
    # Added innermost first: a request meets the /v1 error shaper, the headers, Host, CORS,
    # Origin, body limit.
    app.add_middleware(BodyLimitMiddleware, limit=settings.api_max_body)
    app.add_middleware(OriginCheckMiddleware, cors_origins=settings.cors_origin_list)
    if settings.cors_origin_list:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.add_middleware(
        HostCheckMiddleware, hosts=allowed_hosts(bind_host, settings.allowed_host_list)
    )
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(OpenAIGuardErrors)
    app.state.tokens = tokens
    app.state.limiter = limiter
    app.state.proxies = proxies
    for extension in extensions:
        extension.install(app)
    app.include_router(openai_router(ping_seconds))
    app.include_router(responses_router(ping_seconds))

    @app.get("/api/health", tags=["service"], responses=_errors(421))
    async def get_health(request: Request) -> dict[str, Any]:
        """Status (`starting` until the service is built); with a valid token (or none
        configured) also the model, sources, what is still being built, stores and queue,
        never a key's value. Answers at once, also while the service starts."""
        starting: ServiceStartup = request.app.state.starting
        failed = starting.failure()
        problems = [
            p
            for p in (
                starting.store_problem,
                model_problem(health),
                f"the service could not start: {failed}" if failed is not None else None,
            )
            if p is not None
        ]
        status = "degraded" if problems else "ok" if starting.ready() else "starting"
        if tokens.required:
            try:
                tokens.authenticate(request)
            except HTTPException:
                return {"status": status}
        report = {**health, "status": status, "problems": problems}
        report["starting"] = None if starting.ready() else starting.phase
        report["building"] = await asyncio.to_thread(starting.building)
        return {**report, "queue": starting.queue.snapshot()}

    @app.post("/api/chat", tags=["chat"], dependencies=[Depends(limited)], responses=_CHAT_ERRORS)
    async def post_chat(body: ChatRequest, chat: Service, user: User) -> dict[str, Any]:
        """Answer one message; the reply holds the answer, numbered sources and steps."""
        question, ticket = await _admit(chat, body, user)
        # Closed explicitly, so the slot is given back as soon as the answer is done.
        async with contextlib.aclosing(
            chat.stream(question, ticket, body.session_id, body.mode, user)
        ) as events:
            async for event in events:
                if event.kind == "done":
                    return event.data
                if event.kind == "error":
                    if event.data["retryable"]:
                        raise HTTPException(503, event.data["message"], {"Retry-After": "10"})
                    raise HTTPException(422, event.data["message"])
        raise HTTPException(500, "the run ended without an answer")  # pragma: no cover

    @app.post(
        "/api/chat/stream",
        tags=["chat"],
        dependencies=[Depends(limited)],
        responses=_CHAT_ERRORS,
        response_class=EventSourceResponse,
    )
    async def post_chat_stream(body: ChatRequest, chat: Service, user: User) -> EventSourceResponse:
        """Server-Sent Events: `queue`, `think`, `act`, `observe`, `token`, then `done` or
        `error`. Event ids count from 1; a comment line pings every 15 s. Closing the
        connection cancels the run."""
        question, ticket = await _admit(chat, body, user)
        events = chat.stream(question, ticket, body.session_id, body.mode, user)
        return EventSourceResponse(_sse(events), ping=ping_seconds)

    @app.get("/api/sessions", tags=["sessions"], responses=_errors(401, 421, 422))
    async def list_sessions(chat: Service, user: User, limit: int = 100) -> list[dict[str, Any]]:
        """Your sessions, most recently updated first."""
        return [s.to_dict() for s in await chat.sessions(max(1, min(limit, 1000)), user)]

    @app.get("/api/sessions/{session_id}", tags=["sessions"], responses=_errors(401, 404, 421, 422))
    async def get_session(session_id: SessionId, chat: Service, user: User) -> dict[str, Any]:
        """One of your sessions: its messages, answers with their sources."""
        try:
            info, messages = await chat.history(session_id, user)
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {session_id}") from None
        return {**info.to_dict(), "history": messages}

    @app.delete(
        "/api/sessions/{session_id}",
        tags=["sessions"],
        status_code=204,
        responses=_errors(401, 403, 404, 421, 422, 503),
    )
    async def delete_session(session_id: SessionId, chat: Service, user: User) -> Response:
        """Delete one of your sessions, its index entry and its thread state."""
        try:
            await chat.delete(session_id, user)
        except SessionNotFoundError:
            raise HTTPException(404, f"no session {session_id}") from None
        except StoreUnavailableError as exc:
            raise HTTPException(503, str(exc)) from None
        return Response(status_code=204)

    @app.post(
        "/api/feedback", tags=["chat"], dependencies=[Depends(limited)], responses=_CHAT_ERRORS
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


async def _admit(chat: ChatService, body: ChatRequest, user: str) -> tuple[str, Any]:
    """Check the message, then claim the session, then take a place in line (an invalid
    message gets the same answer whoever's session it names)."""
    try:
        return await chat.admit(body.message, body.session_id, user)
    except InvalidQuestionError as exc:
        too_long = len(body.message.strip()) > MAX_QUESTION_CHARS
        raise HTTPException(413 if too_long else 422, str(exc)) from None
    except SessionNotFoundError:
        raise HTTPException(404, f"no session {body.session_id}") from None
    except StoreUnavailableError as exc:
        raise HTTPException(503, str(exc)) from None
    except QueueFullError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None


async def _sse(events: AsyncIterator[ServiceEvent]) -> AsyncIterator[dict[str, str]]:
    numbers = itertools.count(1)
    async for event in events:
        data = json.dumps(json_safe(event.data), ensure_ascii=False, default=str)
        yield {"event": event.kind, "id": str(next(numbers)), "data": data}
