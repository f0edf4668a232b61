"""The vector store layer over local Qdrant: naming, sharing, locking, CRUD."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from pydantic import SecretStr

from codeweaver.config import Settings
from codeweaver.memory.store_clients import (
    StoreLocation,
    VectorStoreLockedError,
    close_shared_clients,
    shared_client,
)
from codeweaver.memory.vectors import VectorCollection, collection_name, list_collections


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    yield Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    close_shared_clients()


def unit(*rows: list[float]) -> NDArray[np.float32]:
    array = np.array(rows, dtype=np.float32)
    out: NDArray[np.float32] = array / np.linalg.norm(array, axis=1, keepdims=True)
    return out


def test_collection_names_separate_models_and_dimensions() -> None:
    assert collection_name("kb", "minilm", 384) == "kb__minilm__384"
    assert (
        collection_name("kb", "sentence-transformers:BAAI/bge-m3", 1024)
        == "kb__sentence-transformers-baai-bge-m3__1024"
    )
    assert collection_name("kb", "minilm", 384) != collection_name("kb", "minilm", 768)


def test_location_from_settings(tmp_path: Path) -> None:
    local = StoreLocation.from_settings(Settings(data_dir=tmp_path))
    assert local.local and local.folder == (tmp_path / "qdrant").resolve()
    server = StoreLocation.from_settings(
        Settings(
            data_dir=tmp_path, qdrant_url="http://127.0.0.1:6333", qdrant_api_key=SecretStr("k")
        )
    )
    assert not server.local and server.url == "http://127.0.0.1:6333" and server.api_key == "k"


def test_one_client_per_folder_within_a_process(settings: Settings) -> None:
    location = StoreLocation.from_settings(settings)
    assert shared_client(location) is shared_client(StoreLocation.from_settings(settings))
    # Two collections on the same folder go through the one client (no lock error).
    a = VectorCollection.open(settings, "kb", "minilm", 3)
    b = VectorCollection.open(settings, "kb", "other", 2)
    a.ensure()
    b.ensure()
    assert list_collections(location, "kb__") == ["kb__minilm__3", "kb__other__2"]


def test_collections_per_model_never_mix(settings: Settings) -> None:
    small = VectorCollection.open(settings, "kb", "minilm", 3)
    other = VectorCollection.open(settings, "kb", "other-model", 2)
    small.upsert(["00000000-0000-0000-0000-000000000001"], unit([1, 0, 0]), [{"path": "/a"}])
    other.upsert(["00000000-0000-0000-0000-000000000002"], unit([1, 0]), [{"path": "/b"}])
    assert [h.payload["path"] for h in small.query(unit([1, 0, 0])[0], 5)] == ["/a"]
    assert [h.payload["path"] for h in other.query(unit([1, 0])[0], 5)] == ["/b"]
    location = StoreLocation.from_settings(settings)
    assert list_collections(location, "kb__") == ["kb__minilm__3", "kb__other-model__2"]
    with pytest.raises(ValueError, match="dimensions"):
        small.upsert(["00000000-0000-0000-0000-000000000003"], unit([1, 0]), [{}])


def test_upsert_query_delete_by_filter(settings: Settings) -> None:
    col = VectorCollection.open(settings, "test", "m", 3, keyword_fields=("path",))
    assert not col.exists() and col.count() == 0 and col.query(unit([1, 0, 0])[0], 3) == []
    ids = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(1, 5)]
    vectors = unit([1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1])
    payloads = [
        {"path": "/x.md", "i": 0},
        {"path": "/x.md", "i": 1},
        {"path": "/y.md", "i": 0},
        {"path": "/z.md", "i": 0},
    ]
    col.upsert(ids, vectors, payloads)
    assert col.count() == 4 and col.count({"path": "/x.md"}) == 2
    hits = col.query(unit([1, 0, 0])[0], 2)
    assert [h.id for h in hits] == ids[:2]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5) and hits[0].score > hits[1].score
    filtered = col.query(unit([1, 0, 0])[0], 5, where={"path": "/y.md"})
    assert [h.id for h in filtered] == [ids[2]]

    # Upserting an existing id replaces it.
    col.upsert([ids[3]], unit([0, 0, 1]), [{"path": "/z.md", "i": 9}])
    assert dict(col.scroll({"path": "/z.md"}))[ids[3]]["i"] == 9

    col.delete({"path": ["/x.md", "/nope.md"]})
    assert sorted(pid for pid, _ in col.scroll()) == ids[2:]
    col.delete_ids([ids[2]])
    assert [pid for pid, _ in col.scroll(fields=["path"])] == [ids[3]]
    with pytest.raises(ValueError, match="without a filter"):
        col.delete({})


def test_scroll_pages_and_field_selection(settings: Settings) -> None:
    col = VectorCollection.open(settings, "test", "m", 2)
    n = 25
    ids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(n)]
    col.upsert(ids, unit(*[[1.0, i / n] for i in range(n)]), [{"a": i, "b": "x"} for i in range(n)])
    rows = list(col.scroll(fields=["a"], page=7))
    assert len(rows) == n and all(set(p) == {"a"} for _, p in rows)


def _child(script: str) -> subprocess.Popen[str]:
    """A Python process that prints "ready" once it holds what the test needs."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    assert line.startswith("ready"), line
    return child


def test_a_foreign_holder_is_named_after_the_wait(settings: Settings) -> None:
    folder = settings.qdrant_path
    # A plain Qdrant client, which never hands the folder over, holds it until stdin closes.
    child = _child(
        f"""
        import sys
        from qdrant_client import QdrantClient
        client = QdrantClient(path={str(folder)!r})
        print("ready", flush=True)
        sys.stdin.read()
        client.close()
        """
    )
    impatient = settings.model_copy(update={"store_wait": 0.3})
    try:
        with pytest.raises(VectorStoreLockedError) as info:
            VectorCollection.open(impatient, "kb", "minilm", 384)
        message = str(info.value)
        assert str(folder.resolve()) in message
        assert "does not share it" in message
        assert "QDRANT_URL" in message and "Stop that process" in message
        assert info.value.folder == folder.resolve() and info.value.holder is None
    finally:
        child.communicate("", timeout=30)
    # Once the other process has gone, the folder opens.
    assert VectorCollection.open(settings, "kb", "minilm", 384).count() == 0


def test_two_codeweaver_processes_take_turns_on_one_folder(settings: Settings) -> None:
    mine = VectorCollection.open(settings, "kb", "minilm", 2)
    mine.upsert(["00000000-0000-0000-0000-000000000001"], unit([1.0, 0.0]), [{"who": "parent"}])
    # The child asks for the folder, this process hands it over between calls; the child
    # then keeps its client open (idle, like a server) until stdin closes.
    child = _child(
        f"""
        import sys
        import numpy as np
        from codeweaver.config import Settings
        from codeweaver.memory.vectors import VectorCollection
        kb = VectorCollection.open(Settings(data_dir={str(settings.data_dir)!r}), "kb", "minilm", 2)
        seen = kb.count()
        kb.upsert(["00000000-0000-0000-0000-000000000002"],
                  np.array([[0.0, 1.0]], dtype=np.float32), [{{"who": "child"}}])
        print("ready", seen, flush=True)
        sys.stdin.read()
        print("still", kb.count(), flush=True)
        """
    )
    try:
        # The idle child hands the folder back as soon as this process asks.
        assert sorted(p["who"] for _, p in mine.scroll()) == ["child", "parent"]
        mine.upsert(["00000000-0000-0000-0000-000000000003"], unit([1.0, 1.0]), [{"who": "again"}])
    finally:
        out, _ = child.communicate("", timeout=60)
    assert child.returncode == 0
    assert out.strip() == "still 3"  # the child took the folder back for its last call


def test_a_busy_codeweaver_holder_is_named(settings: Settings) -> None:
    child = _child(
        f"""
        import sys
        from codeweaver.config import Settings
        from codeweaver.memory.store_clients import StoreLocation, using
        location = StoreLocation.from_settings(Settings(data_dir={str(settings.data_dir)!r}))
        with using(location):  # in the middle of a call: never handed over
            print("ready", flush=True)
            sys.stdin.read()
        """
    )
    impatient = settings.model_copy(update={"store_wait": 0.3})
    try:
        with pytest.raises(VectorStoreLockedError) as info:
            VectorCollection.open(impatient, "kb", "minilm", 2)
        assert info.value.holder is not None and str(child.pid) in info.value.holder
        assert f"CodeWeaver process {child.pid}" in str(info.value)
    finally:
        child.communicate("", timeout=30)
