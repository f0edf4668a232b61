"""Fixtures shared by the unit tests: private machine-wide locks, the online sources' mocks."""

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
