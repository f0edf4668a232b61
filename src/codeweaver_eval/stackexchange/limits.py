"""The throttles of the loopback Stack Exchange API, as https://api.stackexchange.com/docs/throttle
describes them.

- A daily quota (300 requests without a key); once used up, every request is error 502
  `throttle_violation` (HTTP 400) until the next UTC midnight.
- More than 30 requests in one second from one address: the same error (the real API
  bans the address for a while; the response is not documented further).
- `backoff`: a response may carry `backoff: N`; the next call to the **same method**
  within N seconds is a violation (error 502), while other methods may still be called.
  Which responses carry it is the stand-in's schedule (`backoff_every`), since the real
  service does not say when it sends one.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

DEFAULT_QUOTA = 300  # the daily quota of a request without an app key
MAX_PER_SECOND = 30
THROTTLE_ERROR_ID = 502


class ApiError(Exception):
    """An error the API reports in its error wrapper."""

    def __init__(self, error_id: int, name: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.error_id, self.name, self.message, self.status = error_id, name, message, status


def throttle_violation(seconds: float) -> ApiError:
    """Error 502 in the words the real API uses, naming when requests resume."""
    return ApiError(
        THROTTLE_ERROR_ID,
        "throttle_violation",
        f"too many requests from this IP, more requests available in {max(1, round(seconds))} "
        "seconds",
    )


def _until_midnight() -> float:
    now = datetime.now(UTC)
    midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    return (midnight - now).total_seconds() + 1


@dataclass
class Limits:
    """Quota, rate and `backoff` state; `admit` is called once per request, `backoff_for`
    once per successful response."""

    quota_max: int = DEFAULT_QUOTA
    # Every Nth successful response of a method carries `backoff` (0: never).
    backoff_every: int = 0
    backoff_seconds: int = 2
    max_per_second: int = MAX_PER_SECOND
    clock: Callable[[], float] = time.monotonic
    quota_remaining: int = -1
    violations: int = 0
    _calls: dict[str, int] = field(default_factory=dict)
    _not_before: dict[str, float] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.quota_remaining < 0:
            self.quota_remaining = self.quota_max

    def admit(self, method: str) -> int:
        """Spend one request on `method`; the quota left, or `ApiError` 502."""
        with self._lock:
            now = self.clock()
            while self._recent and now - self._recent[0] >= 1.0:
                self._recent.popleft()
            wait = self._not_before.get(method, 0.0) - now
            if wait > 0:
                self.violations += 1
                raise throttle_violation(wait)
            if len(self._recent) >= self.max_per_second:
                self.violations += 1
                raise throttle_violation(1.0)
            if self.quota_remaining <= 0:
                raise throttle_violation(_until_midnight())
            self._recent.append(now)
            self.quota_remaining -= 1
            return self.quota_remaining

    def backoff_for(self, method: str) -> int | None:
        """The `backoff` this response of `method` carries, if the schedule says so."""
        with self._lock:
            self._calls[method] = count = self._calls.get(method, 0) + 1
            if not self.backoff_every or count % self.backoff_every:
                return None
            self._not_before[method] = self.clock() + self.backoff_seconds
            return self.backoff_seconds
