"""A re-index killed at any moment leaves each file wholly old or wholly new.

The kill is real: a child process re-indexes changed files and `os._exit`s in the middle
of writing the new chunks, between the write and the delete, or in the middle of the
delete. The parent then lists and searches the store the child left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.kb import KnowledgeBase
from codeweaver.memory.store_clients import close_shared_clients
from tests.unit.kb.helpers import FakeEmbedder

ROOT = Path(__file__).resolve().parents[3]
FILES = 3
PARTS = {1: 3, 2: 5}  # sections, so chunks, of each file in versions 1 and 2

# Re-indexes the folder with one store call cut short by the process's death.
CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from codeweaver.config import Settings
    from codeweaver.kb import KnowledgeBase
    from tests.unit.kb.helpers import FakeEmbedder

    data, cache, docs, kill = sys.argv[1:5]
    settings = Settings(data_dir=data, cache_dir=cache)
    kb = KnowledgeBase(settings, embedder=FakeEmbedder(settings.embeddings))
    collection = kb.collection
    upsert, delete_ids = collection.upsert, collection.delete_ids

    def half_written(ids, vectors, payloads):
        half = len(ids) // 2
        upsert(ids[:half], vectors[:half], payloads[:half])
        os._exit(9)

    def half_deleted(ids):
        delete_ids(ids[: len(ids) // 2])
        os._exit(9)

    if kill == "mid-write":
        collection.upsert = half_written
    elif kill == "after-write":
        collection.delete_ids = lambda ids: os._exit(9)
    else:
        collection.delete_ids = half_deleted
    kb.add([Path(docs)])
    sys.exit("the run was not killed")
    """
)


def write_version(docs: Path, version: int) -> None:
    docs.mkdir(exist_ok=True)
    for n in range(FILES):
        parts = [
            f"## Part {k}\n\n" + f"Release v{version} of file {n}, part {k}: rollout steps. " * 12
            for k in range(PARTS[version])
        ]
        (docs / f"guide{n}.md").write_text(f"# Guide {n} version {version}\n\n" + "\n".join(parts))


def open_kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase(settings, embedder=FakeEmbedder(settings.embeddings))


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    yield Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    close_shared_clients()


def killed_reindex(settings: Settings, docs: Path, kill: str) -> None:
    close_shared_clients()  # the child takes the local store folder
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    where = [str(settings.data_dir), str(settings.cache_dir), str(docs)]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, *where, kill],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 9, child.stderr


def versions_seen(kb: KnowledgeBase) -> dict[str, set[int]]:
    """File name -> the versions of it that a search returns chunks of."""
    seen: dict[str, set[int]] = defaultdict(set)
    for hit in kb.search("rollout steps release part", limit=50):
        version = 2 if "Release v2 " in hit.text else 1 if "Release v1 " in hit.text else 0
        seen[Path(hit.path).name].add(version)
    return seen


@pytest.mark.parametrize(
    ("kill", "left"),
    [
        # 7 of the 15 new chunks got in: all 5 of guide0's, 2 of guide1's.
        ("mid-write", (2, 1, 1)),
        ("after-write", (2, 2, 2)),
        ("mid-delete", (2, 2, 2)),
    ],
)
def test_a_killed_reindex_leaves_every_file_in_one_version(
    settings: Settings, tmp_path: Path, kill: str, left: tuple[int, ...]
) -> None:
    docs = tmp_path / "docs"
    write_version(docs, 1)
    assert open_kb(settings).add([docs]).of("added")
    write_version(docs, 2)

    killed_reindex(settings, docs, kill)

    kb = open_kb(settings)
    names = [f"guide{n}.md" for n in range(FILES)]
    listed = {Path(f.path).name: (f.title, f.chunks) for f in kb.list_files()}
    assert listed == {
        f"guide{n}.md": (f"Guide {n} version {v}", PARTS[v]) for n, v in enumerate(left)
    }
    seen = versions_seen(kb)
    assert seen == {name: {v} for name, v in zip(names, left, strict=True)}, seen
    assert len(kb.lexical_index()) == sum(PARTS[v] for v in left)

    # The next run completes the change and deletes whatever the killed one left.
    kb.add([docs])
    assert versions_seen(kb) == {name: {2} for name in names}
    assert kb.chunk_count() == sum(f.chunks for f in kb.list_files()) == FILES * PARTS[2]
