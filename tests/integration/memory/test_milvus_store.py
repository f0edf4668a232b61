"""The Milvus backend for real: several processes on one Milvus Lite file or server, and
the semantic cache and the knowledge base running on it (names, filter expressions and
secrets: `tests/unit/memory/test_milvus_store.py`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from codeweaver.config import Settings
from codeweaver.kb import KnowledgeBase, indexed_chunk_count
from codeweaver.memory.caches import build_cache
from codeweaver.memory.milvus_store import (
    MilvusStore,
)
from codeweaver.memory.semantic_cache import SemanticAnswerCache
from codeweaver.memory.vector_store import (
    VectorStoreError,
    close_vector_stores,
    collection_name,
    open_collection,
)
from tests.unit.kb.helpers import FakeEmbedder
from tests.unit.memory import test_milvus_store as unit_tests

ROOT = Path(__file__).resolve().parents[3]
lite = unit_tests.lite  # Settings on an embedded Milvus Lite file of the test alone


def unit(*rows: list[float]) -> np.ndarray:
    array = np.array(rows, dtype=np.float32)
    return np.asarray(array / np.linalg.norm(array, axis=1, keepdims=True), dtype=np.float32)


# -- several processes -----------------------------------------------------------------------

WRITER = """
import sys
import numpy as np
from codeweaver.config import Settings
from codeweaver.memory.vector_store import open_collection
data_dir, uri, pid, purpose = sys.argv[1:5]
settings = Settings(data_dir=data_dir, vector_store="milvus", milvus_uri=uri or None)
col = open_collection(settings, purpose, "m", 2)
col.upsert([pid], np.array([[0.0, 1.0]], dtype=np.float32), [{"who": "child"}])
print(col.count(), flush=True)
"""


def writer(settings: Settings, pid: str, purpose: str) -> subprocess.Popen[str]:
    """A separate Python process that inserts one point and prints the count it then sees."""
    command = [sys.executable, "-c", WRITER, str(settings.data_dir), settings.milvus_uri or ""]
    return subprocess.Popen(
        [*command, pid, purpose],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def seen_by(child: subprocess.Popen[str]) -> int:
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err[-3000:]
    return int(out.strip().splitlines()[-1])


def write_from_another_process(settings: Settings, pid: str, purpose: str = "shared") -> int:
    return seen_by(writer(settings, pid, purpose))


def test_a_lite_file_written_by_one_process_is_read_by_another(lite: Settings) -> None:
    child_id = str(uuid.uuid4())
    assert write_from_another_process(lite, child_id) == 1
    col = open_collection(lite, "shared", "m", 2)
    (hit,) = col.query(unit([0, 1])[0], 5)
    assert hit.id == child_id and hit.payload == {"who": "child"}
    assert hit.score == pytest.approx(1.0, abs=1e-5)


def test_a_lite_file_in_use_gives_a_clear_error(lite: Settings) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import os, sys
                from pymilvus import MilvusClient
                os.makedirs({str(lite.data_dir)!r}, exist_ok=True)
                client = MilvusClient(uri={str(lite.milvus_lite_path)!r})
                print("ready", flush=True)
                sys.stdin.read()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(VectorStoreError) as info:
            open_collection(lite, "kb", "m", 3)
        message = str(info.value)
        assert str(lite.milvus_lite_path) in message and "one process at a time" in message
        assert "milvus_lite server" in message and "MILVUS_URI" in message
    finally:
        holder.communicate("", timeout=30)
    open_collection(lite, "kb", "m", 3).ensure()  # free again once the holder has gone


def test_processes_share_a_milvus_lite_server(tmp_path: Path, milvus_uri: str) -> None:
    settings = Settings(data_dir=tmp_path, vector_store="milvus", milvus_uri=milvus_uri)
    purpose_name = collection_name("shared", "m", 2)
    store = MilvusStore(settings)
    if purpose_name in store.list_collections():  # another test of this session wrote it
        open_collection(settings, "shared", "m", 2).delete({"who": ["parent", "child"]})
    mine = open_collection(settings, "shared", "m", 2)
    mine.upsert([str(uuid.uuid4())], unit([1, 0]), [{"who": "parent"}])
    child_id = str(uuid.uuid4())
    # The child connects while this process keeps its own client open, and sees our point.
    assert write_from_another_process(settings, child_id) == 2
    hits = mine.query(unit([0, 1])[0], 5)
    assert hits[0].id == child_id
    assert sorted(p["who"] for _, p in mine.scroll()) == ["child", "parent"]
    assert not settings.milvus_lite_path.exists()  # nothing embedded was started


def test_processes_creating_one_collection_at_once_all_succeed(
    tmp_path: Path, milvus_uri: str
) -> None:
    settings = Settings(data_dir=tmp_path, vector_store="milvus", milvus_uri=milvus_uri)
    purpose = f"race{uuid.uuid4().hex[:8]}"
    ids = [str(uuid.uuid4()) for _ in range(3)]
    children = [writer(settings, pid, purpose) for pid in ids]
    assert all(1 <= seen_by(child) <= 3 for child in children)
    col = open_collection(settings, purpose, "m", 2)
    assert sorted(pid for pid, _ in col.scroll()) == sorted(ids)


def test_milvus_and_qdrant_rank_and_score_alike(tmp_path: Path, milvus_uri: str) -> None:
    rng = np.random.default_rng(7)
    vectors = unit(*rng.normal(size=(40, 8)).tolist())
    ids = [str(uuid.uuid4()) for _ in vectors]
    payloads = [{"n": i, "half": i % 2} for i in range(len(vectors))]
    query = unit(rng.normal(size=8).tolist())[0]
    results = []
    purpose = f"cmp{uuid.uuid4().hex[:8]}"
    for backend, uri in (("qdrant", None), ("milvus", milvus_uri)):
        settings = Settings(data_dir=tmp_path / backend, vector_store=backend, milvus_uri=uri)
        col = open_collection(settings, purpose, "m", 8)
        col.upsert(ids, vectors, payloads)
        results.append(col.query(query, 10, where={"half": 1}))
    close_vector_stores()
    qdrant, milvus = results
    assert [h.id for h in milvus] == [h.id for h in qdrant]
    assert [h.score for h in milvus] == pytest.approx([h.score for h in qdrant], abs=1e-4)
    assert [h.payload for h in milvus] == [h.payload for h in qdrant]


# -- the cache and the knowledge base on Milvus ------------------------------------------------


def test_semantic_cache_on_milvus(lite: Settings) -> None:
    cache = build_cache(lite.model_copy(update={"cache_mode": "semantic"}))
    assert isinstance(cache, SemanticAnswerCache)
    cache.store("How do I convert a string to an integer in Python?", "Use int(s).", [], "m")
    cache.store("How do I reverse a list?", "list.reverse()", [], "m")
    hit = cache.explain("how to convert a string to integer in python")
    assert hit.entry is not None and hit.entry.answer == "Use int(s)."
    assert cache.explain("How do I convert an integer to a string in Python?").entry is None
    assert cache.lookup("How do I reverse a list?") is not None
    stats = cache.stats()
    assert (stats.entries, stats.hits) == (2, 2)
    assert "milvus-lite file" in stats.path and "cache__minilm__384" in stats.path
    assert {e.question for e in cache.entries()} == {
        "How do I convert a string to an integer in Python?", "How do I reverse a list?",
    }  # fmt: skip
    assert cache.forget("how do I reverse a list")
    assert cache.clear() == 1 and cache.stats().entries == 0


def test_knowledge_base_on_milvus(lite: Settings, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(
        "# Deploying Zephyr\n\nRun `zephyrctl rollout --canary 5%` to start a canary rollout "
        "of the billing service, then watch the error budget.\n"
    )
    (docs / "vpn.md").write_text(
        "# Remote work\n\nInstall the WireGuard VPN client and import the office profile.\n"
    )
    kb = KnowledgeBase(lite, embedder=FakeEmbedder())
    report = kb.add([docs])
    assert report.counts()["added"] == 2
    assert [f.display_path for f in kb.list_files()] == ["docs/deploy.md", "docs/vpn.md"]
    assert indexed_chunk_count(lite) == kb.chunk_count() >= 2
    (top, *_) = kb.search("zephyrctl canary rollout", limit=2)
    assert top.display_path == "docs/deploy.md" and "zephyrctl" in top.text
    assert kb.search("WireGuard VPN profile", limit=1)[0].display_path == "docs/vpn.md"
    assert kb.add([docs]).counts()["unchanged"] == 2
    assert kb.remove([docs / "vpn.md"]).counts()["removed"] == 1
    assert [f.display_path for f in kb.list_files()] == ["docs/deploy.md"]
    assert all(h.display_path == "docs/deploy.md" for h in kb.search("WireGuard VPN", limit=3))
