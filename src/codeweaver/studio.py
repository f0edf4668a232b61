"""Entry point for LangGraph Studio / Server (`langgraph.json`).

The server supplies its own persistence, so the graph is compiled without a checkpointer.
Both graphs take a `TurnInput` (`question`, `messages`) and return what the CLI and API
show: the answer, its sources, the steps and the thread's `messages`.
"""

from __future__ import annotations

from typing import Any

from codeweaver.agent.graph import build_graph
from codeweaver.agent.librarian import build_librarian_graph
from codeweaver.config import Settings
from codeweaver.factory import build_deps


def make_graph() -> Any:
    """The outer graph on the settings of the environment."""
    return build_graph(build_deps(Settings()))


def make_librarian_graph() -> Any:
    """The librarian (ReAct) graph on the settings of the environment."""
    return build_librarian_graph(build_deps(Settings()))
