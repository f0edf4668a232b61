"""The run queue shared by several server processes through Redis.

Replicas behind a load balancer share one model server; each keeping its own queue would
let N replicas compute N times the answers the model can take at once. Here the line and
the computing slots live in Redis, so every replica sees one line: admission (503 when
every slot runs and the line is full), places in line in reservation order across
replicas, and at most `concurrency` answers computing at once, whichever replica holds
them.

Every operation is one Lua script, so it is atomic. Times are Redis's own clock, so
replicas on machines whose clocks differ still agree. Each place is a lease that its
replica renews while it holds it; the places of a replica that dies (or stops renewing)
expire and are given to the next in line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import uuid
import weakref
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

from codeweaver.api.queue import QueueFullError, TicketBase, check_sizes, retry_after

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

logger = logging.getLogger(__name__)

LEASE_SECONDS = 30.0  # a place not renewed for this long belongs to a dead replica
RENEW_SECONDS = 5.0  # renewals (and the cached counts for health) this often
POLL_SECONDS = 0.05  # a waiting ticket asks for its slot this often

# KEYS: line (zset id -> number), running (zset id -> start time), lease (zset id ->
# expiry), seq (counter). `now` is Redis's clock; expired places are dropped first.
_PRUNE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, id in ipairs(dead) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
"""

# ARGV: capacity, lease seconds, id. -> {number or -1 when full, age of the oldest run}
_RESERVE = (
    _PRUNE
    + """
local held = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2])
if held >= tonumber(ARGV[1]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local age = -1
  if #oldest > 0 then age = now - tonumber(oldest[2]) end
  return {-1, tostring(age), tostring(redis.call('ZCARD', KEYS[2]))}
end
local number = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[1], number, ARGV[3])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[3])
return {number, '0', '0'}
"""
)

# ARGV: concurrency, lease seconds, id. -> -1 started (or already running), -2 lost,
# else the number of places ahead of it beyond the free slots.
_START = (
    _PRUNE
    + """
if redis.call('ZSCORE', KEYS[2], ARGV[3]) then return -1 end
local rank = redis.call('ZRANK', KEYS[1], ARGV[3])
if not rank then return -2 end
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[2])
if rank < free then
  redis.call('ZREM', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[3])
  return -1
end
if free < 0 then free = 0 end
return rank - free
"""
)

# ARGV: lease seconds, ids... -> {running, in line} after renewing the ids still held.
_RENEW = (
    _PRUNE
    + """
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
return {redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[1])}
"""
)

_LEAVE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 0
"""


class QueueStoreError(RuntimeError):
    """Redis, which holds the shared line, cannot be reached."""


class PlaceLostError(RuntimeError):
    """The ticket's place expired (its replica stopped renewing it) before it ran."""


class SharedTicket(TicketBase):
    """A place in the shared line, then a computing slot anywhere in the cluster."""

    def __init__(self, number: int, token: str, queue: SharedRunQueue) -> None:
        self.number = number
        self.token = token
        self.queue = queue
        self.state = "reserved"
        self._position = 0
        self._finalizer = weakref.finalize(self, queue._forget, token)
        self._finalizer.atexit = False

    def __repr__(self) -> str:
        return f"SharedTicket(number={self.number}, state={self.state!r})"

    @property
    def position(self) -> int:
        """Places ahead of this one beyond the free slots, as last seen in Redis."""
        return self._position if self.state == "reserved" else 0

    async def _wait_for_slot(self) -> None:
        while True:
            answer = await self.queue._try_start(self.token)
            if answer == -1:
                return
            if answer == -2:
                raise PlaceLostError(
                    "this request's place in line expired; the server was too busy to keep it"
                )
            self._position = answer
            await asyncio.sleep(POLL_SECONDS)

    def _give_back(self) -> None:
        self.queue._forget(self.token)


class SharedRunQueue:
    """`RunQueue`'s contract with the line and slots kept in Redis under `name`.

    Every replica must be configured with the same concurrency and line length: each
    operation applies the calling replica's values.
    """

    def __init__(
        self,
        redis_url: str,
        concurrency: int,
        max_waiting: int,
        seconds_per_run: float = 20.0,
        name: str = "default",
        lease_seconds: float = LEASE_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
    ) -> None:
        check_sizes(concurrency, max_waiting)
        from redis.asyncio import Redis

        self.concurrency = concurrency
        self.max_waiting = max_waiting
        self.seconds_per_run = seconds_per_run
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        self._redis: Redis = Redis.from_url(redis_url)
        prefix = f"codeweaver:runq:{name}"
        self._keys = [f"{prefix}:line", f"{prefix}:running", f"{prefix}:lease", f"{prefix}:seq"]
        self._reserve_script = self._redis.register_script(_RESERVE)
        self._start_script = self._redis.register_script(_START)
        self._renew_script = self._redis.register_script(_RENEW)
        self._leave_script = self._redis.register_script(_LEAVE)
        self._held: set[str] = set()
        self._counts = (0, 0)  # (running, in line) cluster-wide, as last seen
        self._renewer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: set[asyncio.Task[Any]] = set()
        self._tokens = itertools.count()
        self._origin = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

    @property
    def capacity(self) -> int:
        return self.concurrency + self.max_waiting

    @property
    def running(self) -> int:
        return self._counts[0]

    @property
    def waiting(self) -> int:
        return max(0, self._counts[1] - max(0, self.concurrency - self._counts[0]))

    def reserve(self) -> SharedTicket:
        raise TypeError("the shared queue is asynchronous: use `await queue.admit()`")

    async def admit(self) -> SharedTicket:
        """A place in the shared line, or `QueueFullError` when the cluster is full."""
        self._start_renewing()
        token = f"{self._origin}-{next(self._tokens)}"
        number, age, running = await self._call(
            self._reserve_script, self.capacity, self.lease_seconds, token
        )
        if int(number) < 0:
            started = float(age) if float(age) >= 0 else None
            raise QueueFullError(self._retry_after(started, int(running)))
        self._held.add(token)
        return SharedTicket(int(number), token, self)

    def snapshot(self) -> dict[str, int | bool]:
        return {
            "running": self.running,
            "waiting": self.waiting,
            "concurrency": self.concurrency,
            "max_waiting": self.max_waiting,
            "shared": True,
        }

    async def check_store(self) -> None:
        """`QueueStoreError` (with the reason) when Redis does not answer."""
        try:
            await self._renew()
        except Exception as exc:
            raise QueueStoreError(
                f"the shared run queue in Redis at CODEWEAVER_REDIS_URL: {type(exc).__name__}"
            ) from exc

    async def aclose(self) -> None:
        """Give back every place this process holds and stop renewing."""
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        for token in list(self._held):
            with contextlib.suppress(Exception):
                await self._call(self._leave_script, token)
        self._held.clear()
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        await self._redis.aclose()

    def _retry_after(self, oldest_age: float | None, running: int) -> int:
        return retry_after(self.seconds_per_run, self.concurrency, oldest_age if running else None)

    async def _call(self, script: AsyncScript, *args: str | int | float) -> Any:
        """Run one script on the queue's keys."""
        return await cast("Awaitable[Any]", script(keys=self._keys, args=list(args)))

    async def _try_start(self, token: str) -> int:
        """-1 started, -2 lost, else the places ahead beyond the free slots."""
        return int(
            await self._call(self._start_script, self.concurrency, self.lease_seconds, token)
        )

    def _start_renewing(self) -> None:
        loop = asyncio.get_running_loop()
        if self._renewer is None or self._renewer.done() or self._loop is not loop:
            self._loop = loop
            self._renewer = loop.create_task(self._renew_forever(), name="runq-renew")

    async def _renew_forever(self) -> None:
        while True:
            try:
                await self._renew()
            except Exception as exc:  # Redis away for a moment: the leases outlast it
                logger.warning("run queue: cannot renew places in Redis: %s", exc)
            await asyncio.sleep(self.renew_seconds)

    async def _renew(self) -> None:
        running, line = await self._call(self._renew_script, self.lease_seconds, *self._held)
        self._counts = (int(running), int(line))

    def _forget(self, token: str) -> None:
        """Give `token`'s place back; callable from any thread (a collected ticket)."""
        self._held.discard(token)
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # nothing to tell Redis from here: the lease expires
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is loop:
            self._leave_soon(token)
        else:
            loop.call_soon_threadsafe(self._leave_soon, token)

    def _leave_soon(self, token: str) -> None:
        task = asyncio.get_running_loop().create_task(self._leave(token))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _leave(self, token: str) -> None:
        try:
            await self._call(self._leave_script, token)
        except Exception as exc:  # the lease expires instead
            logger.warning("run queue: cannot give a place back in Redis: %s", exc)
