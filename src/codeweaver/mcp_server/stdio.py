"""`codeweaver mcp`: the MCP tools over standard input and output, for a local agent.

The service is what `codeweaver serve` builds, started in the background so the agent's
handshake is answered at once; a tool called before it is ready waits for it (seconds), and
one called while a source's index is still being built answers from the sources that are
ready. While
the SDK serves, fd 1 points at stderr, so stray output (a native library's banner) cannot
corrupt the protocol; logging goes to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from codeweaver.mcp_server.server import build_server

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from mcp.server.mcpserver import MCPServer

    from codeweaver.api.service import ChatService
    from codeweaver.api.startup import ServiceStartup
    from codeweaver.config import Settings
    from codeweaver.memory.sessions import ThreadStore

logger = logging.getLogger(__name__)


class _Starting:
    """The service being built (`ServiceStartup`); `get` waits for it."""

    def __init__(self) -> None:
        self.startup: ServiceStartup | None = None

    async def get(self) -> ChatService:
        if self.startup is None:
            raise ToolError("CodeWeaver is not running")
        try:
            return await self.startup.service()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ToolError(f"CodeWeaver could not start: {exc}") from None


async def open_startup(
    settings: Settings, store: ThreadStore, llm: BaseChatModel | None = None
) -> ServiceStartup:
    """What `create_app`'s lifespan starts: the run queue, then the service in the
    background (the caller closes both: `aclose`, then the queue's)."""
    from codeweaver.api.queue import open_queue
    from codeweaver.api.startup import ServiceStartup
    from codeweaver.memory.store_check import check_thread_store

    problem = await check_thread_store(store)
    if problem is not None:
        logger.error("thread store: %s", problem.detail)
    queue, _ = await open_queue(settings)
    startup = ServiceStartup(settings, store, queue, problem.reason if problem else None, llm=llm)
    startup.start()
    return startup


async def start_service(
    settings: Settings, store: ThreadStore, llm: BaseChatModel | None = None
) -> ChatService:
    """The service with every source prepared (tests and scripts that want it settled)."""
    startup = await open_startup(settings, store, llm)
    service = await startup.service()
    await startup.prepared()
    return service


def stdio_server_for(settings: Settings, llm: BaseChatModel | None = None) -> MCPServer:
    """The MCP server whose lifespan opens the store and starts the service."""
    from codeweaver.memory.sessions import open_thread_store

    starting = _Starting()

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        # Entered once the SDK owns stdin/stdout, so nothing below can write to the wire.
        async with open_thread_store(settings) as store:
            starting.startup = await open_startup(settings, store, llm)
            try:
                yield
            finally:
                await starting.startup.aclose()
                await starting.startup.queue.aclose()  # its places, if shared

    return build_server(starting.get, settings=settings, lifespan=lifespan)


def run_stdio(settings: Settings, llm: BaseChatModel | None = None) -> None:
    """Serve the MCP tools over stdio until the client closes standard input."""
    asyncio.run(stdio_server_for(settings, llm).run_stdio_async())
