"""Text embedders by name: `minilm` (built in, NumPy) or `sentence-transformers:<model>`."""

from codeweaver.embeddings.base import (
    Embedder,
    EmbeddingError,
    Vectors,
    create_embedder,
    embedder_kinds,
    register_embedder,
)

__all__ = [
    "Embedder",
    "EmbeddingError",
    "Vectors",
    "create_embedder",
    "embedder_kinds",
    "register_embedder",
]
