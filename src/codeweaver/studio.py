"""Entry point for LangGraph Studio / Server (`langgraph.json`).

The server supplies its own persistence, so the graph is compiled without a checkpointer.
Both graphs take a `TurnInput` (`question`, `messages`) and return what the CLI and API
show: the answer, its sources, the steps and the thread's `messages`.

The server calls a factory for every run, on its event loop, where blocking I/O is an
error (`langgraph dev` stops the run): the dependencies (model, sources, cache, all of
which open files) are built once per process, in a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from codeweaver.agent.graph import build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.config import Settings
from codeweaver.factory import build_deps

if TYPE_CHECKING:
    from codeweaver.agent.deps import Deps

_deps: Deps | None = None
_lock: asyncio.Lock | None = None


async def shared_deps() -> Deps:
    """The dependencies on the settings of the environment, built once, off the loop."""
    global _deps, _lock
    if _deps is not None:
        return _deps
    if _lock is None:
        _lock = asyncio.Lock()
    async with _lock:
        if _deps is None:
            # Settings() too: it reads `.env`.
            _deps = await asyncio.to_thread(lambda: build_deps(Settings()))
        return _deps


async def make_graph() -> Any:
    """The outer graph on the settings of the environment."""
    return build_graph(await shared_deps())


async def make_librarian_graph() -> Any:
    """The librarian (ReAct) graph on the settings of the environment."""
    return build_librarian_graph(await shared_deps())
