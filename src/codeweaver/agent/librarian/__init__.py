"""Librarian mode: a ReAct loop over tools, sharing threads with the pipeline."""

from codeweaver.agent.librarian.graph import LIBRARIAN_NODES, MAX_STEPS, build_librarian_graph

__all__ = ["LIBRARIAN_NODES", "MAX_STEPS", "build_librarian_graph"]
