"""Fixtures of the vector-store tests: one Milvus Lite server for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.milvus_server import milvus_lite_server


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`http://127.0.0.1:PORT` of a Milvus Lite server running in its own process."""
    with milvus_lite_server(tmp_path_factory.mktemp("milvus-server")) as uri:
        yield uri
