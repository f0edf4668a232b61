"""CodeWeaver: answers developers' questions from many sources at once, with citations.

The Python API, imported on first use so `import codeweaver` (and `codeweaver --help`)
stays fast:

    from codeweaver import Settings, build_deps, open_assistant

    async with open_assistant(build_deps(Settings())) as assistant:
        result = await assistant.ask("How do I read a file line by line in Python?")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeweaver.agent.runner import Assistant, RunEvent, RunResult
    from codeweaver.config import Settings
    from codeweaver.embeddings.base import register_embedder
    from codeweaver.factory import build_deps, open_assistant
    from codeweaver.llm.registry import register_provider
    from codeweaver.sources.base import register_source
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
    "register_provider": "codeweaver.llm.registry",
    "register_embedder": "codeweaver.embeddings.base",
}
__all__ = [
    "Assistant",
    "Intent",
    "RunEvent",
    "RunResult",
    "SearchResult",
    "Settings",
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
