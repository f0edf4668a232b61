"""`codeweaver mcp`: the MCP tools over standard input and output, for a local agent.

The service is what every door opens (`open_service`), started in the background so the
agent's handshake is answered at once; a tool called before it is ready waits for it
(seconds), and one called while a source's index is still being built answers from the
sources that are ready. While the SDK serves, fd 1 points at stderr, so stray output (a
native library's banner) cannot corrupt the protocol; logging goes to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
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


def stdio_server_for(settings: Settings, llm: BaseChatModel | None = None) -> MCPServer:
    """The MCP server whose lifespan opens the service."""
    from codeweaver.api.startup import open_service

    starting = _Starting()

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        # Entered once the SDK owns stdin/stdout, so nothing below can write to the wire.
        async with open_service(settings, llm=llm) as startup:
            starting.startup = startup
            yield

    return build_server(starting.get, settings=settings, lifespan=lifespan)


def run_stdio(settings: Settings, llm: BaseChatModel | None = None) -> None:
    """Serve the MCP tools over stdio until the client closes standard input."""
    asyncio.run(stdio_server_for(settings, llm).run_stdio_async())
