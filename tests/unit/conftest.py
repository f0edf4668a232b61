"""Fixtures shared by the online-source tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from tests.fakes import FakeClock


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
