"""FastAPI application: JSON and SSE endpoints over `ChatService`, and the web page at `/`.

The routes live in `routes/` (one router per resource) and the OpenAI-compatible
modules; this module assembles them with the lifespan, middleware and error handlers.
`create_app`'s lifespan opens the service as every door does (`startup.open_service`), so
tests pass their own settings and a scripted model, and `codeweaver serve` the configured
ones.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from codeweaver.api.auth import TokenTable
from codeweaver.api.errors import OpenAIGuardErrors, install_error_handlers
from codeweaver.api.health import refresh_health, static_health, version
from codeweaver.api.oauth import install_oauth
from codeweaver.api.openai_compat import openai_router
from codeweaver.api.openai_responses import responses_router
from codeweaver.api.rate_limit import RequestLimiter, parse_networks
from codeweaver.api.routes import chat, feedback, health, page, sessions
from codeweaver.api.security import (
    BodyLimitMiddleware,
    HostCheckMiddleware,
    OriginCheckMiddleware,
    SecurityHeadersMiddleware,
    allowed_hosts,
)
from codeweaver.api.startup import open_service
from codeweaver.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.deps import Deps


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
    tokens = TokenTable.from_settings(settings)
    redis_url = settings.redis_url.get_secret_value() if settings.redis_url else None
    limiter = RequestLimiter(settings.api_rate_per_minute, redis_url)
    app = FastAPI(
        title="CodeWeaver",
        version=version(),
        summary="Answers developers' questions from many sources at once, with citations.",
        lifespan=_lifespan(settings, llm, deps, limiter, extensions),
    )
    install_error_handlers(app)
    # Innermost: verifies an identity provider's access token (when configured) for
    # `TokenTable.authenticate`, after the Host, Origin and size checks.
    install_oauth(app, tokens.oauth, tokens.is_static)
    _add_middleware(app, settings, bind_host)
    app.state.tokens = tokens
    app.state.limiter = limiter
    app.state.proxies = parse_networks(settings.trusted_proxy_list)
    app.state.health = {}  # filled by the lifespan, refreshed in the background
    for extension in extensions:
        extension.install(app)
    app.include_router(openai_router(ping_seconds))
    app.include_router(responses_router(ping_seconds))
    app.include_router(health.router)
    app.include_router(chat.chat_router(ping_seconds))
    app.include_router(sessions.router)
    app.include_router(feedback.router)
    app.include_router(page.router)
    app.mount("/static", page.static_files(), name="static")
    return app


def _lifespan(
    settings: Settings,
    llm: BaseChatModel | None,
    deps: Deps | None,
    limiter: RequestLimiter,
    extensions: Sequence[AppExtension],
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Only what answers health and admits questions happens before listening; the
        # service itself is built in the background (`open_service`).
        if limiter.shared:
            await limiter.check_store()
        async with AsyncExitStack() as stack:
            starting = await stack.enter_async_context(open_service(settings, llm=llm, deps=deps))
            app.state.starting = starting
            report: dict[str, Any] = app.state.health
            report.update(
                await asyncio.to_thread(
                    static_health, settings, None, starting.store, starting.model_server
                )
            )
            refresher = asyncio.create_task(refresh_health(report, starting, settings))
            try:
                for extension in extensions:
                    await stack.enter_async_context(extension.lifespan(app))
                yield
            finally:
                refresher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refresher

    return lifespan


def _add_middleware(app: FastAPI, settings: Settings, bind_host: str) -> None:
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
