"""The client's gate: a method's `backoff` delays only that method; the rate stays under
what the API drops."""

from __future__ import annotations

from typing import Any

import pytest

from codeweaver.sources.base import SourceError
from codeweaver.sources.so_throttle import MAX_REQUESTS_PER_SECOND, MethodGate


class Time:
    """A clock that a sleep moves forward."""

    def __init__(self) -> None:
        self.now, self.slept = 1_000.0, []  # type: ignore[var-annotated]

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


def _replying(body: dict[str, Any]) -> Any:
    async def send() -> dict[str, Any]:
        return body

    return lambda: send()


async def test_a_backoff_delays_the_next_call_of_its_method_only() -> None:
    time = Time()
    gate = MethodGate("stackoverflow", time.sleep, lambda: time.now)
    await gate.call("search/advanced", _replying({"items": [], "backoff": 3}))
    await gate.call("questions/answers", _replying({"items": []}))
    assert time.slept == []  # another method is not held back
    await gate.call("search/advanced", _replying({"items": []}))
    assert time.slept == [3.0]


async def test_a_backoff_longer_than_the_wait_allowed_is_a_throttle() -> None:
    time = Time()
    gate = MethodGate("stackoverflow", time.sleep, lambda: time.now, max_wait=10)
    await gate.call("similar", _replying({"items": [], "backoff": 60}))
    with pytest.raises(SourceError, match="back off similar") as caught:
        await gate.call("similar", _replying({"items": []}))
    assert caught.value.kind == "throttled" and time.slept == []


async def test_requests_never_exceed_the_rate_the_api_allows() -> None:
    time = Time()
    gate = MethodGate("stackoverflow", time.sleep, lambda: time.now)
    sent: list[float] = []

    async def send() -> dict[str, Any]:
        sent.append(time.now)
        return {"items": []}

    for n in range(3 * MAX_REQUESTS_PER_SECOND):
        await gate.call(f"method{n % 3}", send)
        time.now += 0.001  # a loopback answers in a millisecond
    assert time.slept  # it had to wait
    for i, start in enumerate(sent):  # no second holds more than the limit
        assert sum(1 for t in sent[i:] if t - start < 1.0) <= MAX_REQUESTS_PER_SECOND
