"""The embedder interface and the registry of embedders by name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from codeweaver.registry import Registry, UnknownNameError

if TYPE_CHECKING:
    from codeweaver.config import Settings

Vectors = NDArray[np.float32]


class EmbeddingError(RuntimeError):
    """An embedder could not be created or run (missing files, missing extra, bad name)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors. Implementations are thread-safe."""

    name: str

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str]) -> Vectors:
        """An `(len(texts), dimension)` float32 array, each row of unit length."""
        ...


@runtime_checkable
class EmbedsDocuments(Protocol):
    """An embedder with a separate document side (E5's `passage: `), for asymmetric indexes."""

    def embed_documents(self, texts: list[str]) -> Vectors:
        """Like `Embedder.embed`, for texts that are searched rather than searched with."""
        ...


def embed_documents(embedder: Embedder, texts: list[str]) -> Vectors:
    """Vectors of documents to index: the embedder's document side when it has one, else
    `embed`. Queries against them keep `embed`."""
    if isinstance(embedder, EmbedsDocuments):
        return embedder.embed_documents(texts)
    return embedder.embed(texts)


# A factory gets the part after `kind:` (empty for plain names) and the settings.
EmbedderFactory = Callable[[str, "Settings"], Embedder]

# Built-in embedders register themselves when their module is imported; other packages
# register theirs under the `codeweaver.embedders` entry-point group.
EMBEDDERS: Registry[EmbedderFactory] = Registry(
    "embedding model",
    group="codeweaver.embedders",
    builtins=[
        "codeweaver.embeddings.minilm",
        "codeweaver.embeddings.multilingual_e5",
        "codeweaver.embeddings.use_multilingual",
        "codeweaver.embeddings.st_backend",
    ],
)
register_embedder = EMBEDDERS.register  # decorator: `@register_embedder("kind")`
_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def embedder_kinds() -> list[str]:
    return EMBEDDERS.names()


def create_embedder(name: str, settings: Settings) -> Embedder:
    """The embedder called `name` (`minilm`, `multilingual-e5-small`, `use-multilingual`,
    `sentence-transformers:<model>`).

    Instances are shared per name within the process: models are large and stateless.
    """
    name = name.strip()
    with _SHARED_LOCK:
        if name in _SHARED:
            return _SHARED[name]
        kind, _, argument = name.partition(":")
        try:
            factory = EMBEDDERS.get(kind.strip().lower())
        except UnknownNameError as exc:
            raise EmbeddingError(
                f"{exc} (set CODEWEAVER_EMBEDDINGS, e.g. `minilm`, `multilingual-e5-small` "
                "or `sentence-transformers:BAAI/bge-m3`)"
            ) from None
        embedder = factory(argument.strip(), settings)
        _SHARED[name] = embedder
        return embedder


def clear_shared_embedders() -> None:
    """Forget shared instances (tests)."""
    with _SHARED_LOCK:
        _SHARED.clear()


def l2_normalise(vectors: NDArray[np.floating]) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # An all-zero row (empty input) stays zero instead of becoming NaN.
    out: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return out
