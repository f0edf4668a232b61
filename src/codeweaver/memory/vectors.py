"""Former home of the Qdrant layer, kept so existing imports work.

`VectorCollection` here is the Qdrant collection class (`QdrantCollection`). New code opens
collections with `codeweaver.memory.vector_store.open_collection`, which honours
`CODEWEAVER_VECTOR_STORE`, and annotates with `vector_store.VectorCollection`.
"""

from __future__ import annotations

from codeweaver.memory.qdrant_store import QdrantCollection, count_points, list_collections
from codeweaver.memory.vector_store import Hit, Payload, Where, collection_name, collection_prefix

VectorCollection = QdrantCollection

__all__ = [
    "Hit",
    "Payload",
    "QdrantCollection",
    "VectorCollection",
    "Where",
    "collection_name",
    "collection_prefix",
    "count_points",
    "list_collections",
]
