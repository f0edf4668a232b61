"""The service, started in the background so every door answers at once.

`open_service` is where every door (`serve`, `mcp`, `ask`, `chat`) turns settings into a
running service: the run queue, the thread store and its session index, the dependencies.
`codeweaver serve` listens, and `codeweaver mcp` answers its handshake, before anything
slow happens. The dependencies (model client, sources, cache: seconds) are built first, and
a question asked meanwhile waits for them; the sources' preparation (their indexes, which
after an install take up to a minute, and the docs vectors, minutes) runs after that and
never holds up an answer: a source still being built is left out of a run and says how far
it is (`building`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from codeweaver.api.run_line import open_queue
from codeweaver.memory.sessions import open_thread_store
from codeweaver.memory.store_check import check_thread_store
from codeweaver.sources.base import Preparable, ReportsBuilding

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from codeweaver.agent.deps import Deps
    from codeweaver.api.queue import RunLine
    from codeweaver.api.service import ChatService
    from codeweaver.config import Settings
    from codeweaver.llm.remote import ModelServerInfo
    from codeweaver.memory.sessions import ThreadStore

logger = logging.getLogger(__name__)
# Progress of the background work, one line each time it moves (the CLI shows this logger's
# INFO lines, so a plain log says what is being built and how far).
progress_log = logging.getLogger("codeweaver.progress")
REPORT_SECONDS = 15.0


@asynccontextmanager
async def open_service(
    settings: Settings,
    *,
    llm: BaseChatModel | None = None,
    deps: Deps | None = None,
    prepared: bool = False,
) -> AsyncIterator[ServiceStartup]:
    """The run queue, the thread store (checked), then the service, started in the
    background (`ServiceStartup.service()` waits for it); all closed on leaving.

    `deps` (or just `llm`) replaces what the settings would build. `prepared`: the door
    prepared the sources itself (the CLI, showing its progress), so nothing is prepared
    or reported in the background.
    """
    queue, model_server = await open_queue(settings)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(queue.aclose)  # its places, if shared
        store = await stack.enter_async_context(open_thread_store(settings))
        problem = await check_thread_store(store)
        if problem is not None:
            logger.error("thread store: %s", problem.detail)
        startup = ServiceStartup(
            settings,
            store,
            queue,
            problem.reason if problem else None,
            llm=llm,
            deps=deps,
            model_server=model_server,
            prepared=prepared,
        )
        stack.push_async_callback(startup.aclose)
        startup.start()
        yield startup


class ServiceStartup:
    """Builds the `ChatService` in the background; `service()` waits for it."""

    def __init__(
        self,
        settings: Settings,
        store: ThreadStore,
        queue: RunLine,
        store_problem: str | None = None,
        *,
        llm: BaseChatModel | None = None,
        deps: Deps | None = None,
        model_server: ModelServerInfo | None = None,
        prepared: bool = False,
    ) -> None:
        self.settings = settings
        self.store, self.queue, self.store_problem = store, queue, store_problem
        # The model server's answer when the queue was sized (None: no server).
        self.model_server = model_server
        self._llm, self._deps, self._prepared = llm, deps, prepared
        self._task: asyncio.Task[ChatService] | None = None
        self._preparing: asyncio.Task[None] | None = None
        self._reporting: asyncio.Task[None] | None = None
        self._unprepared: list[str] = []
        self.phase = "not started"

    def start(self) -> None:
        self._task = asyncio.create_task(self._build())

    async def _build(self) -> ChatService:
        from codeweaver.agent.runner import Assistant
        from codeweaver.api.service import ChatService
        from codeweaver.factory import build_deps
        from codeweaver.memory.vector_store import VectorStoreNotWritableError

        self.phase = "loading the model client and the sources"
        deps = self._deps
        if deps is None:
            try:
                deps = await asyncio.to_thread(build_deps, self.settings, llm=self._llm)
            except VectorStoreNotWritableError as exc:
                # Said once, in one line, as the thread store's problem is; health names it.
                logger.error("vector store: %s", exc)
                raise
        service = ChatService(
            Assistant(deps, checkpointer=self.store.checkpointer),
            self.store,
            self.queue,
            self.store_problem,
        )
        service.building = self.building
        self.phase = "ready"
        if not self._prepared:
            # Known before the preparation starts, so no question asked meanwhile misses
            # them.
            self._unprepared = [
                name
                for name, source in deps.sources.items()
                if isinstance(source, Preparable) and source.status().usable
            ]
            self._preparing = asyncio.create_task(self._prepare(deps))
            self._reporting = asyncio.create_task(self._report(deps))
        logger.info("CodeWeaver is ready (model %s)", self.settings.model)
        return service

    async def _prepare(self, deps: Deps) -> None:
        from codeweaver.factory import prepare_sources

        def preparing(name: str | None) -> None:
            # The sources before `name` are prepared (None: all of them).
            left = self._unprepared
            self._unprepared = left[left.index(name) :] if name in left else []

        for problem in await asyncio.to_thread(prepare_sources, deps, None, preparing):
            logger.warning("source preparation: %s", problem)

    async def _report(self, deps: Deps) -> None:
        """Log what is being built whenever it moved, and once when all is ready."""
        said: dict[str, str] = {}
        while True:
            building = await asyncio.to_thread(building_sources, deps)
            for name, line in building.items():
                if said.get(name) != line:
                    progress_log.info("%s: %s", name, line)
            if said and not building:
                progress_log.info("every source is ready")
            said = building
            await asyncio.sleep(REPORT_SECONDS)

    async def service(self) -> ChatService:
        """The service, once built (a failure to build is raised to every caller)."""
        if self._task is None:
            raise RuntimeError("the service was not started")
        # Shielded: one caller's cancellation must not cancel the build for all.
        return await asyncio.shield(self._task)

    async def prepared(self) -> None:
        """Wait until the sources' preparation is over (the docs vectors may still be
        embedding in the background)."""
        await self.service()
        if self._preparing is not None:
            await asyncio.shield(self._preparing)

    def ready(self) -> ChatService | None:
        """The service if it is built, without waiting."""
        task = self._task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    def failure(self) -> BaseException | None:
        task = self._task
        if task is None or not task.done() or task.cancelled():
            return None
        return task.exception()

    def building(self) -> dict[str, str]:
        """Each source still being built and how far (empty when all are ready)."""
        service = self.ready()
        if service is None:
            return {}
        found = building_sources(service.deps)
        for name in self._unprepared:
            found.setdefault(name, "preparing its index")
        return found

    async def aclose(self) -> None:
        for task in (self._reporting, self._preparing, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def building_sources(deps: Deps) -> dict[str, str]:
    """Name -> what is being built, for the sources that say they are building."""
    found: dict[str, str] = {}
    for name, source in deps.sources.items():
        if isinstance(source, ReportsBuilding):
            try:
                line = source.building()
            except Exception:  # a report must never fail the health check
                logger.debug("building() of %s failed", name, exc_info=True)
                continue
            if line:
                found[name] = line
    return found
