"""Fixtures shared by the unit tests: no service reached, private machine-wide locks, the
online sources' mocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import respx

from codeweaver.llm import busy
from tests.fakes import FakeClock


@pytest.fixture(autouse=True)
def private_busy_locks(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machine-wide model and background-work locks, private to the test run: a
    CodeWeaver answering in another process must not hold up a test's background build."""
    folder = tmp_path_factory.getbasetemp() / "locks"
    folder.mkdir(exist_ok=True)
    monkeypatch.setattr(busy, "lock_file", lambda what: Path(folder) / f"{what}.lock")


# Where a shell points the service at its databases and vector servers. The unit tier
# reaches none of them, whatever the shell says: the tests that need PostgreSQL or Redis
# are in tests/integration and tests/e2e, marked `services`.
SERVICE_VARIABLES = (
    "DATABASE_URL",
    "CODEWEAVER_REDIS_URL",
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "MILVUS_URI",
    "MILVUS_TOKEN",
)


@pytest.fixture(scope="session", autouse=True)
def no_services() -> Iterator[None]:
    """Session-wide, so module fixtures that build Settings see the cleaned environment."""
    with pytest.MonkeyPatch.context() as patch:
        for name in SERVICE_VARIABLES:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    """Every request must hit a recorded route: no network in tests."""
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
