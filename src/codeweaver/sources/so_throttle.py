"""The Stack Exchange API's per-method `backoff` and request rate, kept by the client.

https://api.stackexchange.com/docs/throttle: a response may carry `backoff: N`, and the
application must then not call **that method** again for N seconds; more than 30
requests a second from one address are dropped. One `MethodGate` is shared by every
search of a source, so concurrent searches honour one backoff: calls to one method go
one at a time, so a response's `backoff` is known before the next call of that method.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from codeweaver.sources.base import SourceError

logger = logging.getLogger(__name__)

# The longest `backoff` a search waits out; a longer one skips it (the pipeline gives a
# source 30 s in all).
MAX_BACKOFF_WAIT = 10.0
# The API drops requests beyond 30 a second from one address; the client stays under.
MAX_REQUESTS_PER_SECOND = 25


class MethodGate:
    """Calls to API methods, each after its last `backoff`, at most N a second."""

    def __init__(
        self,
        name: str,
        sleep: Callable[[float], Any],
        clock: Callable[[], float],
        *,
        max_wait: float = MAX_BACKOFF_WAIT,
        per_second: int = MAX_REQUESTS_PER_SECOND,
    ) -> None:
        self._name, self._sleep, self._clock = name, sleep, clock
        self._max_wait, self._per_second = max_wait, per_second
        self._not_before: dict[str, float] = {}
        # asyncio locks belong to one event loop; a source may outlive several.
        self._locks: dict[tuple[int, str], asyncio.Lock] = {}
        self._sent: deque[float] = deque()  # when the requests of the last second went

    async def call(self, method: str, send: Callable[[], Awaitable[Any]]) -> Any:
        """`send()` for `method` once its backoff is over; notes the backoff it returns."""
        loop = id(asyncio.get_running_loop())
        async with self._locks.setdefault((loop, method), asyncio.Lock()):
            wait = self._not_before.get(method, 0.0) - self._clock()
            if wait > self._max_wait:
                raise SourceError(
                    f"{self._name}: the Stack Exchange API asked to back off {method} "
                    f"for {wait:.0f}s more",
                    kind="throttled",
                )
            if wait > 0:
                logger.info("%s: backing off %s for %.1fs", self._name, method, wait)
                await self._sleep(wait)
            await self._pace()
            data = await send()
            asked = data.get("backoff") if isinstance(data, dict) else None
            if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0:
                logger.info("%s: asked to back off %s for %gs", self._name, method, asked)
                self._not_before[method] = self._clock() + float(asked)
            return data

    async def _pace(self) -> None:
        now = self._clock()
        while self._sent and now - self._sent[0] >= 1.0:
            self._sent.popleft()
        if len(self._sent) >= self._per_second:
            await self._sleep(1.0 - (now - self._sent[0]))
            self._sent.popleft()
        self._sent.append(self._clock())
