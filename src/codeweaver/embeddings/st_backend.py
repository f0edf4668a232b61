"""`sentence-transformers:<model>`: any sentence-transformers model, when that extra is installed.

sentence-transformers pulls torch, so it is never a core dependency; it is imported lazily
and its absence is reported with the command that adds it.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from codeweaver.embeddings.base import EmbeddingError, Vectors, l2_normalise, register_embedder

if TYPE_CHECKING:
    from codeweaver.config import Settings

INSTALL_HINT = (
    "pip install sentence-transformers (it pulls torch; on a machine without a GPU install "
    "the CPU build of torch first)"
)


class SentenceTransformerEmbedder:
    """A sentence-transformers model by its hub name or local path."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.name = f"sentence-transformers:{model_name}"
        try:
            module = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise EmbeddingError(
                f"the embedding model {self.name!r} needs the optional package "
                f"`sentence-transformers`, which is not installed: {INSTALL_HINT}; "
                "or use the built-in `minilm` (CODEWEAVER_EMBEDDINGS=minilm)."
            ) from exc
        try:
            self._model: Any = module.SentenceTransformer(model_name)
        except Exception as exc:
            raise EmbeddingError(f"cannot load {self.name!r}: {exc}") from exc
        self._lock = threading.Lock()
        dim = self._model.get_sentence_embedding_dimension()
        if not dim:
            dim = len(self._model.encode(["dimension probe"])[0])
        self._dimension = int(dim)

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:  # torch modules are not documented as safe for concurrent calls
            vectors = self._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
        return l2_normalise(np.asarray(vectors, dtype=np.float32))


@register_embedder("sentence-transformers")
def _create(argument: str, settings: Settings) -> SentenceTransformerEmbedder:
    if not argument:
        raise EmbeddingError(
            "name the model: `sentence-transformers:<model>`, "
            "e.g. `sentence-transformers:BAAI/bge-m3`"
        )
    return SentenceTransformerEmbedder(argument)
