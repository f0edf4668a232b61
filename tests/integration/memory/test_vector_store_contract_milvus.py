"""The vector-store contract of `tests/unit/memory/test_vector_store_contract.py` on Milvus:
an embedded Milvus Lite file, and a Milvus Lite server in another process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.memory.vector_store import close_vector_stores
from tests.unit.memory import test_vector_store_contract as contract
from tests.unit.memory.test_vector_store_contract import (  # noqa: F401  (collected here too)
    test_delete_by_filter_and_by_id,
    test_filters_match_and_any_of,
    test_list_by_prefix_and_dimensions_never_mix,
    test_missing_collection_reads_empty_until_written,
    test_query_orders_by_cosine_similarity,
    test_scroll_pages_through_everything,
    test_set_payload_merges,
    test_the_backend_is_the_one_configured,
    test_untrusted_filter_values_are_literals,
    test_upsert_replaces_and_checks_the_dimension,
)

purpose = contract.purpose  # a purpose no other test uses: the Milvus stores outlive a test


@pytest.fixture(scope="module")
def lite_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # One embedded file for the module: starting Milvus Lite costs about a second.
    yield tmp_path_factory.mktemp("milvus-lite")
    close_vector_stores()


@pytest.fixture(params=["milvus-lite", "milvus-server"])
def settings(request: pytest.FixtureRequest, tmp_path: Path, lite_dir: Path) -> Iterator[Settings]:
    base = {"cache_dir": tmp_path / "cache", "vector_store": "milvus"}
    if request.param == "milvus-lite":
        yield Settings(**base, data_dir=lite_dir, milvus_uri=None)
        return
    uri = request.getfixturevalue("milvus_uri")
    yield Settings(**base, data_dir=tmp_path / "data", milvus_uri=uri)
