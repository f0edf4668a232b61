"""`codeweaver mcp`: the MCP tools over standard input and output, for a local agent.

The service is what `codeweaver serve` builds, started in the background so the agent's
handshake is answered at once; a tool called before it is ready waits for it. While
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
    from codeweaver.config import Settings
    from codeweaver.memory.sessions import ThreadStore

logger = logging.getLogger(__name__)


class _Starting:
    """The service being built; `get` waits for it."""

    def __init__(self) -> None:
        self.task: asyncio.Task[ChatService] | None = None

    async def get(self) -> ChatService:
        if self.task is None:
            raise ToolError("CodeWeaver is not running")
        try:
            # Shielded: one caller's cancellation must not cancel the build for all.
            return await asyncio.shield(self.task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ToolError(f"CodeWeaver could not start: {exc}") from None


async def start_service(
    settings: Settings, store: ThreadStore, llm: BaseChatModel | None = None
) -> ChatService:
    """What `create_app`'s lifespan builds: deps, prepared sources, assistant, queue."""
    from codeweaver.agent.runner import Assistant
    from codeweaver.api.queue import open_queue
    from codeweaver.api.service import ChatService
    from codeweaver.factory import build_deps, prepare_sources
    from codeweaver.memory.store_check import check_thread_store

    problem = await check_thread_store(store)
    if problem is not None:
        logger.error("thread store: %s", problem.detail)
    deps = await asyncio.to_thread(build_deps, settings, llm=llm)
    for message in await asyncio.to_thread(prepare_sources, deps):
        logger.warning("source preparation: %s", message)
    assistant = Assistant(deps, checkpointer=store.checkpointer)
    queue, _ = await open_queue(settings)
    logger.info("CodeWeaver is ready (model %s)", settings.model)
    return ChatService(assistant, store, queue, problem.reason if problem else None)


def stdio_server_for(settings: Settings, llm: BaseChatModel | None = None) -> MCPServer:
    """The MCP server whose lifespan opens the store and starts the service."""
    from codeweaver.memory.sessions import open_thread_store

    starting = _Starting()

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        # Entered once the SDK owns stdin/stdout, so nothing below can write to the wire.
        async with open_thread_store(settings) as store:
            starting.task = asyncio.create_task(start_service(settings, store, llm))
            try:
                yield
            finally:
                starting.task.cancel()
                await asyncio.gather(starting.task, return_exceptions=True)
                if not starting.task.cancelled() and starting.task.exception() is None:
                    await starting.task.result().queue.aclose()  # its places, if shared

    return build_server(starting.get, lifespan=lifespan)


def run_stdio(settings: Settings, llm: BaseChatModel | None = None) -> None:
    """Serve the MCP tools over stdio until the client closes standard input."""
    asyncio.run(stdio_server_for(settings, llm).run_stdio_async())
