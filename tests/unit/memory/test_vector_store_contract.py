"""One contract for every vector-store backend, here on local Qdrant (embedded Milvus Lite
and a Milvus Lite server in another process: the integration tier runs it again)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from codeweaver.config import Settings
from codeweaver.memory.vector_store import (
    VectorCollection,
    VectorStoreError,
    close_vector_stores,
    collection_name,
    collection_prefix,
    count_store_points,
    open_collection,
    vector_store,
)

IDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(1, 5)]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    """Local Qdrant; `tests/integration/memory/test_vector_store_contract_milvus.py` runs
    these tests again on Milvus Lite and a Milvus server."""
    yield Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", milvus_uri=None)
    close_vector_stores()


@pytest.fixture
def purpose() -> str:
    """A purpose no other test uses: the Milvus stores outlive one test."""
    return f"t{uuid.uuid4().hex[:10]}"


def unit(*rows: list[float]) -> NDArray[np.float32]:
    array = np.array(rows, dtype=np.float32)
    out: NDArray[np.float32] = array / np.linalg.norm(array, axis=1, keepdims=True)
    return out


def filled(settings: Settings, purpose: str) -> VectorCollection:
    col = open_collection(settings, purpose, "m", 3, keyword_fields=("path",))
    payloads = [
        {"path": "/x.md", "i": 0, "draft": True, "tags": ["a", "b"]},
        {"path": "/x.md", "i": 1, "draft": False, "tags": ["b"]},
        {"path": "/y.md", "i": 0, "draft": False, "tags": []},
        {"path": "/z.md", "i": 0, "draft": False, "tags": ["c"]},
    ]
    col.upsert(IDS, unit([1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1]), payloads)
    return col


def test_the_backend_is_the_one_configured(settings: Settings) -> None:
    expected = {"qdrant": "qdrant-local", "milvus": "milvus-"}[settings.vector_store]
    assert vector_store(settings).label.startswith(expected)


def test_missing_collection_reads_empty_until_written(settings: Settings, purpose: str) -> None:
    col = open_collection(settings, purpose, "m", 3)
    assert not col.exists()
    assert col.count() == 0 and col.query(unit([1, 0, 0])[0], 3) == []
    assert list(col.scroll()) == [] and col.retrieve(IDS) == {}
    col.delete_ids(IDS)  # nothing to delete: no error, nothing created
    assert not col.exists()
    col.ensure()
    col.ensure()  # idempotent
    assert col.exists() and col.count() == 0


def test_query_orders_by_cosine_similarity(settings: Settings, purpose: str) -> None:
    col = filled(settings, purpose)
    query = unit([1, 0.2, 0])[0]
    hits = col.query(query, 3)
    assert [h.id for h in hits] == [IDS[1], IDS[0], IDS[2]]
    vectors = unit([1, 0, 0], [0.9, 0.1, 0], [0, 1, 0])
    expected = [float(vectors[i] @ query) for i in (1, 0, 2)]
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-4)
    (itself,) = col.query(unit([0, 0, 1])[0], 1)
    assert itself.id == IDS[3] and itself.score == pytest.approx(1.0, abs=1e-5)
    assert itself.payload == {"path": "/z.md", "i": 0, "draft": False, "tags": ["c"]}


def test_filters_match_and_any_of(settings: Settings, purpose: str) -> None:
    col = filled(settings, purpose)
    query = unit([1, 0, 0])[0]
    assert [h.id for h in col.query(query, 5, where={"path": "/y.md"})] == [IDS[2]]
    any_of = col.query(query, 5, where={"path": ["/y.md", "/z.md", "/none.md"]})
    assert sorted(h.id for h in any_of) == IDS[2:]
    assert col.count({"path": "/x.md"}) == 2 and col.count({"path": "/x.md", "i": 1}) == 1
    assert col.count({"draft": True}) == 1 and col.count({"i": [1, 7]}) == 1
    assert col.count({"path": []}) == 0 and col.query(query, 5, where={"path": []}) == []
    assert [pid for pid, _ in col.scroll({"path": "/z.md"})] == [IDS[3]]


def test_untrusted_filter_values_are_literals(settings: Settings, purpose: str) -> None:
    col = open_collection(settings, purpose, "m", 2)
    tricky = ['a"b', "c\\", 'x" or path != "', "line\nbreak\ttab", "it's", '\\"', "é 한글"]
    ids = [str(uuid.uuid4()) for _ in tricky]
    col.upsert(ids, unit(*[[1.0, i] for i in range(len(tricky))]), [{"path": t} for t in tricky])
    for pid, value in zip(ids, tricky, strict=True):
        assert [h for h, _ in col.scroll({"path": value})] == [pid], value
    assert col.count({"path": tricky[:3]}) == 3
    # A value that would widen the filter if it were pasted into an expression matches none.
    assert col.count({"path": '" or path != "'}) == 0
    assert col.count({"path": 'a\\"b'}) == 0


def test_upsert_replaces_and_checks_the_dimension(settings: Settings, purpose: str) -> None:
    col = filled(settings, purpose)
    col.upsert([IDS[3]], unit([0, 1, 1]), [{"path": "/z.md", "i": 9, "draft": False, "tags": []}])
    assert dict(col.scroll({"path": "/z.md"}))[IDS[3]]["i"] == 9
    assert col.count() == 4
    (hit,) = col.query(unit([0, 1, 1])[0], 1)
    assert hit.id == IDS[3] and hit.score == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="dimensions"):
        col.upsert([IDS[0]], unit([1, 0]), [{}])
    with pytest.raises(ValueError, match="same length"):
        col.upsert(IDS[:2], unit([1, 0, 0]), [{}])


def test_delete_by_filter_and_by_id(settings: Settings, purpose: str) -> None:
    col = filled(settings, purpose)
    with pytest.raises(ValueError, match="without a filter"):
        col.delete({})
    assert col.count() == 4
    col.delete({"path": []})  # matches nothing
    col.delete({"path": ["/x.md", "/nope.md"]})
    assert sorted(pid for pid, _ in col.scroll()) == IDS[2:]
    col.delete({"path": "/y.md"})
    assert [pid for pid, _ in col.scroll()] == [IDS[3]]
    col.delete_ids([IDS[3], IDS[0]])
    assert col.count() == 0 and col.exists()


def test_set_payload_merges(settings: Settings, purpose: str) -> None:
    col = filled(settings, purpose)
    gone = "00000000-0000-0000-0000-000000000099"
    col.set_payload([IDS[0], gone], {"i": 5, "hits": 1})
    payloads = col.retrieve([IDS[0], IDS[1], gone])
    assert set(payloads) == {IDS[0], IDS[1]}
    assert payloads[IDS[0]] == {
        "path": "/x.md",
        "i": 5,
        "draft": True,
        "tags": ["a", "b"],
        "hits": 1,
    }
    assert payloads[IDS[1]]["i"] == 1 and "hits" not in payloads[IDS[1]]
    assert col.count() == 4  # the point skipped was not created
    (hit,) = col.query(unit([1, 0, 0])[0], 1)  # the vector is kept
    assert hit.id == IDS[0] and hit.score == pytest.approx(1.0, abs=1e-5) and hit.payload["i"] == 5


def test_scroll_pages_through_everything(settings: Settings, purpose: str) -> None:
    col = open_collection(settings, purpose, "m", 2)
    n = 25
    ids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(n)]
    col.upsert(ids, unit(*[[1.0, i / n] for i in range(n)]), [{"a": i, "b": "x"} for i in range(n)])
    rows = list(col.scroll(fields=["a"], page=7))
    assert sorted(pid for pid, _ in rows) == ids
    assert all(set(p) == {"a"} for _, p in rows)
    assert sorted(p["a"] for _, p in rows) == list(range(n))
    assert all(p == {} for _, p in col.scroll(fields=[], page=10))
    assert all(p == {"a": p["a"], "b": "x"} for _, p in col.scroll(page=4))
    assert len(list(col.scroll({"a": [1, 2, 3]}, page=2))) == 3


def test_list_by_prefix_and_dimensions_never_mix(settings: Settings, purpose: str) -> None:
    small = open_collection(settings, purpose, "m", 2)
    large = open_collection(settings, purpose, "m", 3)
    other = open_collection(settings, purpose, "other.model-x", 2)
    assert len({small.name, large.name, other.name}) == 3
    small.upsert([IDS[0]], unit([1, 0]), [{"path": "/a"}])
    large.upsert(IDS[1:3], unit([1, 0, 0], [0, 1, 0]), [{"path": "/b"}, {"path": "/c"}])
    other.upsert([IDS[3]], unit([0, 1]), [{"path": "/d"}])
    assert [h.payload["path"] for h in small.query(unit([1, 0])[0], 5)] == ["/a"]
    assert [h.payload["path"] for h in other.query(unit([1, 0])[0], 5)] == ["/d"]
    store = vector_store(settings)
    assert store.list_collections(collection_prefix(purpose, "m")) == [
        collection_name(purpose, "m", 2),
        collection_name(purpose, "m", 3),
    ]
    assert store.list_collections(collection_prefix(purpose, "other.model-x")) == [
        collection_name(purpose, "other.model-x", 2)
    ]
    assert store.count_points(collection_name(purpose, "m", 3)) == 2
    assert store.count_points(collection_name(purpose, "m", 7)) == 0
    assert count_store_points(settings, collection_prefix(purpose, "m")) == 3
    assert count_store_points(settings, collection_prefix(purpose, "none")) == 0


def test_unknown_backend_names_the_known_ones(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, vector_store="chroma")
    with pytest.raises(VectorStoreError) as info:
        open_collection(settings, "kb", "m", 3)
    message = str(info.value)
    assert "'chroma'" in message and "milvus, qdrant" in message
    assert "CODEWEAVER_VECTOR_STORE" in message
    assert not (tmp_path / "qdrant").exists() and not (tmp_path / "milvus.db").exists()
