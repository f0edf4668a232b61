"""The team knowledge base: `codeweaver index add PATH…` and the `knowledge_base` source."""

from codeweaver.kb.report import FileResult, IndexedFile, IndexReport, KbHit
from codeweaver.kb.store import KnowledgeBase, indexed_chunk_count

__all__ = [
    "FileResult",
    "IndexReport",
    "IndexedFile",
    "KbHit",
    "KnowledgeBase",
    "indexed_chunk_count",
]
