"""What `/api/health` reports: version, model (and its server), sources, stores, and
whether each dependency a request needs answers now.

Built once at start and refreshed in the background, so a health check never waits on a
source or a dependency. A remote model server (`openai:` models with `OPENAI_BASE_URL`)
is probed at start, which also tells the run queue how many answers it computes at once.
Every `DEPENDENCY_SECONDS` the dependencies get a live check with a short time-out: the
model server, Redis (`CODEWEAVER_REDIS_URL`: the budget and the run queue), the thread
store, and a vector store on a server. One that does not answer makes health `degraded`
and is named in its problems, since requests that need it fail meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from codeweaver.config import Settings
    from codeweaver.llm.remote import ModelServerInfo
    from codeweaver.memory.sessions import ThreadStore
    from codeweaver.memory.vector_store import VectorStore

logger = logging.getLogger(__name__)

HEALTH_REFRESH_SECONDS = 30.0  # the sources' states
DEPENDENCY_SECONDS = 2.0  # the dependencies' live checks: how old health may be
CHECK_TIMEOUT = 1.0  # a dependency slower than this to answer counts as down


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


def dependency_problems(health: dict[str, Any]) -> list[str]:
    """Each dependency that did not answer its last live check, and why."""
    found: list[str] = []
    server = health.get("model_server")
    if server is not None and not server["reachable"]:
        found.append(f"the model server at {server['url']} does not answer: {server['error']}")
    for state in health.get("dependencies", {}).values():
        if not state["reachable"]:
            found.append(f"{state['name']} does not answer ({state['error']})")
    return found


def model_problem(health: dict[str, Any]) -> str | None:
    """Why requests cannot be served now: every dependency that does not answer (the
    model server, Redis, the stores), in one line; None when all of them answer."""
    found = dependency_problems(health)
    return "; ".join(found) if found else None


class LiveCheck:
    """One dependency's live check, `probe` (raising when the dependency fails).

    At most one probe runs at a time, and none is cancelled: a query cancelled midway
    can leave a connection unusable. A probe slower than the time-out reports the
    dependency as not answering, and the next round waits on the same probe.
    """

    def __init__(self, probe: Callable[[], Awaitable[object]]) -> None:
        self._probe = probe
        self._task: asyncio.Task[str | None] | None = None

    async def __call__(self, timeout: float) -> str | None:
        """None when the dependency answered, else why not, in a few words."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())
        done, _ = await asyncio.wait({self._task}, timeout=timeout)
        return self._task.result() if done else f"no answer within {timeout:g} s"

    async def _run(self) -> str | None:
        try:
            await self._probe()
        except Exception as exc:  # never the text: it may hold a URL with a password
            return type(exc).__name__
        return None

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()


class Dependencies:
    """The live checks of what a request needs besides the model server: Redis when
    configured, the thread store, and the vector store when it is a server (a local one
    lives in this process and its files)."""

    def __init__(self, settings: Settings, store: ThreadStore) -> None:
        # name -> (how health calls it, its check)
        self._checks: dict[str, tuple[str, LiveCheck]] = {}
        if settings.redis_url is not None:
            from codeweaver.api.rate_limit import ping_redis

            url = settings.redis_url.get_secret_value()
            self._checks["redis"] = (
                "Redis at CODEWEAVER_REDIS_URL",
                LiveCheck(lambda: ping_redis(url, CHECK_TIMEOUT)),
            )
        self._checks["threads"] = (
            f"the thread store ({store.backend})",
            # A read of a session nobody has: one indexed row lookup on the store's own
            # connection, which every request uses.
            LiveCheck(lambda: store.index.session("cw-health-check")),
        )
        vectors = _vector_server(settings)
        if vectors is not None:
            self._checks["vectors"] = (
                f"the vector store ({vectors.describe()})",
                LiveCheck(lambda: asyncio.to_thread(vectors.list_collections)),
            )

    async def states(self) -> dict[str, dict[str, Any]]:
        names = list(self._checks)
        errors = await asyncio.gather(*(self._checks[n][1](CHECK_TIMEOUT) for n in names))
        return {
            name: {"name": self._checks[name][0], "reachable": error is None, "error": error}
            for name, error in zip(names, errors, strict=True)
        }

    def close(self) -> None:
        for _, check in self._checks.values():
            check.cancel()


def _vector_server(settings: Settings) -> VectorStore | None:
    from codeweaver.memory.vector_store import VectorStoreError, vector_store

    try:
        store = vector_store(settings)
    except VectorStoreError:  # an unknown backend: the service says so when it starts
        return None
    return store if store.label.endswith("-server") else None


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
    """Source states and dependencies change (keys, indexes, a restart, an outage):
    refresh them off the loop, forever; the sources as soon as the service is built."""
    await asyncio.gather(
        _refresh_sources(health, starting),
        _refresh_dependencies(health, Dependencies(settings, starting.store), settings),
    )


async def _refresh_sources(health: dict[str, Any], starting: Any) -> None:
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


async def _refresh_dependencies(
    health: dict[str, Any], dependencies: Dependencies, settings: Settings
) -> None:
    try:
        while True:
            # The model server's probe has its own short time-out (and never raises).
            model, states = await asyncio.gather(probe_model(settings), dependencies.states())
            if model is not None:
                health["model_server"] = model_server_health(settings, model)
            health["dependencies"] = states
            health["checked"] = time.time()
            await asyncio.sleep(DEPENDENCY_SECONDS)
    finally:
        dependencies.close()
