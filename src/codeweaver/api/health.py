"""What `/api/health` reports: version, model (and its server), sources, stores.

Built once at start and refreshed in the background, so a health check never waits on a
source or a model server. A remote model server (`openai:` models with
`OPENAI_BASE_URL`) is probed at start, which also tells the run queue how many answers
it computes at once, and again on every refresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from importlib import metadata
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.llm.remote import ModelServerInfo
    from codeweaver.memory.sessions import ThreadStore

logger = logging.getLogger(__name__)

HEALTH_REFRESH_SECONDS = 30.0


def version() -> str:
    try:
        return metadata.version("codeweaver")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "0"


def source_states(deps: Any) -> dict[str, str]:
    return {name: str(source.status()) for name, source in deps.sources.items()}


def model_server_url(settings: Settings) -> str | None:
    """The OpenAI-compatible server the model is reached at, when it is one we can ask."""
    if settings.provider != "openai" or not settings.openai_base_url:
        return None
    return settings.openai_base_url


async def probe_model(settings: Settings) -> ModelServerInfo | None:
    """The model server's state, or None when the model is not behind one."""
    from codeweaver.llm.remote import aprobe_model_server

    url = model_server_url(settings)
    if url is None:
        return None
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return await aprobe_model_server(url, api_key=key)


def model_server_health(settings: Settings, info: ModelServerInfo) -> dict[str, Any]:
    url = model_server_url(settings) or ""
    parts = urlsplit(url)
    # Credentials in a URL are secrets: keep the host and port only.
    netloc = parts.netloc.rpartition("@")[2]
    return {
        "url": urlunsplit(parts._replace(netloc=netloc)),
        "reachable": info.reachable,
        "models": info.models,
        "concurrency": info.concurrency,
        "error": info.error,
    }


def model_problem(health: dict[str, Any]) -> str | None:
    """Why answers cannot be computed now, when the model server does not answer."""
    server = health.get("model_server")
    if server is None or server["reachable"]:
        return None
    return f"the model server at {server['url']} does not answer: {server['error']}"


def static_health(
    settings: Settings, deps: Any, store: ThreadStore, model: ModelServerInfo | None
) -> dict[str, Any]:
    from codeweaver.memory.vector_store import store_label

    health: dict[str, Any] = {
        "version": version(),
        "model": settings.model,
        "provider": settings.provider,
        "sources": source_states(deps) if deps is not None else {},
        "stores": {
            "threads": store.backend,
            "cache": settings.cache_mode if settings.cache_enabled else "off",
            "vectors": store_label(settings),
        },
        "checked": time.time(),
    }
    if model is not None:
        health["model_server"] = model_server_health(settings, model)
    return health


async def refresh_health(health: dict[str, Any], starting: Any, settings: Settings) -> None:
    """Source states and the model server change (keys, indexes, a restart): refresh
    them off the loop, forever; the sources as soon as the service is built."""
    with contextlib.suppress(Exception):  # a service that cannot start: health says why
        service = await starting.service()
        health["sources"] = await asyncio.to_thread(source_states, service.deps)
    while True:
        await asyncio.sleep(HEALTH_REFRESH_SECONDS)
        service = starting.ready()
        if service is None:
            continue
        try:
            states = await asyncio.to_thread(source_states, service.deps)
        except Exception as exc:  # health must keep answering
            logger.warning("source status refresh failed: %s", exc)
        else:
            health["sources"] = states
        model = await probe_model(settings)
        if model is not None:
            health["model_server"] = model_server_health(settings, model)
        health["checked"] = time.time()
