"""The Milvus backend without Milvus running: names, filter expressions, secrets, and what
it says when pymilvus is missing (Milvus Lite and a Milvus server for real:
`tests/integration/memory/test_milvus_store.py`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.kb import indexed_chunk_count
from codeweaver.memory.milvus_clients import MilvusLocation
from codeweaver.memory.milvus_store import (
    MilvusStore,
    filter_expression,
    logical_name,
    milvus_name,
)
from codeweaver.memory.vector_store import (
    VectorStoreError,
    close_vector_stores,
    collection_name,
    collection_prefix,
    open_collection,
    store_description,
    store_label,
)

MILVUS_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Settings]:
    """Settings on an embedded Milvus Lite file of this test alone."""
    yield Settings(
        data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", vector_store="milvus",
        milvus_uri=None,
    )  # fmt: skip
    close_vector_stores()


# -- names and expressions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("purpose", "model", "dimension"),
    [
        ("kb", "minilm", 384),
        ("kb", "sentence-transformers:BAAI/bge-m3", 1024),
        ("cache", "multilingual-e5-small", 384),
        ("9lives", "a.b_c-d", 3),
    ],
)
def test_collection_names_map_to_valid_milvus_names(
    purpose: str, model: str, dimension: int
) -> None:
    name = collection_name(purpose, model, dimension)
    mapped = milvus_name(name)
    assert MILVUS_IDENTIFIER.fullmatch(mapped), mapped
    assert logical_name(mapped) == name
    assert mapped.startswith(milvus_name(collection_prefix(purpose, model)))


def test_name_mapping_is_injective_and_ignores_foreign_collections() -> None:
    names = ["kb__bge-m3__3", "kb__bge_m3__3", "kb__bge.m3__3", "kb__bgeHm3__3"]
    assert len({milvus_name(n.lower()) for n in names}) == len(names)
    assert milvus_name("kb__minilm__384") == "kb__minilm__384"
    assert milvus_name("kb__bge-m3.v2__3") == "kb__bgeHm3Dv2__3"
    assert milvus_name("9x__m__2") == "N9x__m__2"
    for foreign in ["MyCollection", "Nx", "kb__Other__3", "N9X"]:
        assert logical_name(foreign) is None, foreign
    with pytest.raises(ValueError):
        milvus_name("Has Upper")


def test_filter_expressions_quote_every_string() -> None:
    assert filter_expression(None) == "" and filter_expression({}) == ""
    assert filter_expression({"path": "/a.md"}) == '(path == "/a.md")'
    assert filter_expression({"path": ["/a", "/b"], "i": 3, "ok": True, "x": 0.5}) == (
        '(path in ["/a", "/b"]) and (i == 3) and (ok == true) and (x == 0.5)'
    )
    assert filter_expression({"path": []}) is None  # matches nothing
    injected = 'x" or path != "y\\'
    assert filter_expression({"path": injected}) == '(path == "x\\" or path != \\"y\\\\")'
    assert filter_expression({"t": "a\nb\r\tc"}) == '(t == "a\\nb\\r\\tc")'
    bad_filters: list[dict[str, Any]] = [
        {"path or 1": "x"}, {"id": "x"}, {"vector": 1}, {"x": float("nan")}, {"x": {}},
    ]  # fmt: skip
    for bad in bad_filters:
        with pytest.raises(ValueError):
            filter_expression(bad)


# -- where it lives, and secrets -----------------------------------------------------------


def test_labels_and_descriptions_never_show_secrets(tmp_path: Path) -> None:
    embedded = Settings(data_dir=tmp_path, vector_store="milvus", milvus_uri=None)
    assert store_label(embedded) == "milvus-lite"
    assert store_description(embedded) == f"milvus-lite file {(tmp_path / 'milvus.db').resolve()}"
    server = Settings(
        data_dir=tmp_path,
        vector_store="milvus",
        milvus_uri="https://alice:pa55word@in01.example.com:19530",
        milvus_token=SecretStr("tok-SECRET"),
    )
    assert store_label(server) == "milvus-server"
    described = store_description(server)
    assert described == "milvus server https://in01.example.com:19530"
    location = MilvusLocation.from_settings(server)
    assert location.token == "tok-SECRET"
    for shown in (described, repr(location), repr(MilvusStore(server).location)):
        assert "SECRET" not in shown and "pa55word" not in shown
    from codeweaver.cli.doctor import _stores

    assert _stores(server)["vectors"] == described
    assert store_label(Settings(data_dir=tmp_path, qdrant_url="http://q:6333")) == "qdrant-server"
    assert store_label(Settings(data_dir=tmp_path, vector_store="nope")) == "unknown (nope)"
    assert not (tmp_path / "milvus.db").exists()  # describing never opens anything


def test_missing_pymilvus_says_what_to_install(
    lite: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    with pytest.raises(VectorStoreError, match=re.escape("pip install 'codeweaver[milvus]'")):
        open_collection(lite, "kb", "m", 3)


def test_nothing_indexed_counts_zero_without_creating_the_file(lite: Settings) -> None:
    assert indexed_chunk_count(lite) == 0
    assert not lite.milvus_lite_path.exists()
