"""A read-only Milvus Lite store is said to be not writable, never "in use by another
process" (Milvus Lite runs its own server process; the other stores:
`tests/unit/memory/test_read_only_data.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.memory.vector_store import VectorStoreNotWritableError, open_collection
from tests.unit.memory import test_read_only_data as read_only
from tests.unit.memory.test_read_only_data import MakeReadOnly, fill

# The unit tests' fixtures: a data folder of its own, and a way to make a folder read-only.
settings = read_only.settings
make_read_only = read_only.make_read_only


def test_a_read_only_milvus_lite_store_is_said_to_be_not_writable(
    settings: Settings, make_read_only: MakeReadOnly
) -> None:
    pytest.importorskip("milvus_lite")
    lite = settings.model_copy(update={"vector_store": "milvus"})
    fill(lite)
    folder = Path(lite.milvus_lite_path).resolve()
    make_read_only(folder if folder.is_dir() else folder.parent)
    with pytest.raises(Exception) as opening:
        open_collection(lite, "cache", "minilm", 4)
    assert isinstance(opening.value, VectorStoreNotWritableError), opening.value
    assert "is not writable" in str(opening.value) and "one process at a time" not in str(
        opening.value
    )
