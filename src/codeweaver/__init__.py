"""CodeWeaver: answers developers' questions from many sources at once, with citations.

The Python API, imported on first use so `import codeweaver` (and `codeweaver --help`)
stays fast:

    from codeweaver import Settings, build_deps, open_assistant

    async with open_assistant(build_deps(Settings())) as assistant:
        result = await assistant.ask("How do I read a file line by line in Python?")

A source plugs in with `@register_source(name, SourceInfo(...))` (its MCP tool, its live
check, its key) and, for a search node of its own, `add_search_node(SearchNode(...))`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeweaver.agent.runner import Assistant, RunEvent, RunResult
    from codeweaver.agent.search_nodes import SearchNode, add_search_node
    from codeweaver.config import Settings
    from codeweaver.embeddings.base import register_embedder
    from codeweaver.factory import build_deps, open_assistant
    from codeweaver.llm.registry import register_provider
    from codeweaver.sources.base import McpTool, SourceInfo, register_source
    from codeweaver.vocabulary import Intent, SearchResult

# Each public name and the module that defines it.
_EXPORTS = {
    "Settings": "codeweaver.config",
    "build_deps": "codeweaver.factory",
    "open_assistant": "codeweaver.factory",
    "Assistant": "codeweaver.agent.runner",
    "RunEvent": "codeweaver.agent.runner",
    "RunResult": "codeweaver.agent.runner",
    "SearchResult": "codeweaver.vocabulary",
    "Intent": "codeweaver.vocabulary",
    "register_source": "codeweaver.sources.base",
    "SourceInfo": "codeweaver.sources.base",
    "McpTool": "codeweaver.sources.base",
    "SearchNode": "codeweaver.agent.search_nodes",
    "add_search_node": "codeweaver.agent.search_nodes",
    "register_provider": "codeweaver.llm.registry",
    "register_embedder": "codeweaver.embeddings.base",
}
__all__ = [
    "Assistant",
    "Intent",
    "McpTool",
    "RunEvent",
    "RunResult",
    "SearchNode",
    "SearchResult",
    "Settings",
    "SourceInfo",
    "add_search_node",
    "build_deps",
    "open_assistant",
    "register_embedder",
    "register_provider",
    "register_source",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'codeweaver' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
