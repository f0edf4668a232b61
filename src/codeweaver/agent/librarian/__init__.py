"""Librarian mode: a ReAct loop over tools, sharing threads with the pipeline."""

from codeweaver.agent.librarian.graph import LIBRARIAN_NODES, build_librarian_graph
from codeweaver.agent.librarian.nodes import MAX_STEPS

__all__ = ["LIBRARIAN_NODES", "MAX_STEPS", "build_librarian_graph"]
