"""A bounded queue in front of answer computation.

A local model computes a couple of answers at a time on a few cores; more requests wait
their turn in order, up to a limit, and beyond it the API answers 503 with `Retry-After` instead of
piling work up. Waiting happens on the event loop (inference itself runs in worker
threads), so health checks and other requests stay fast.

The queue admits `concurrency + max_waiting` requests at once: a reservation counts
toward that capacity from `reserve()` (taken before the response starts, so a full queue
is a 503) until it is released or cancelled. Only the reservations beyond the free slots
are *waiting*; the others start as soon as they ask for their slot. Slots go to waiting
tickets in the order they were reserved.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

logger = logging.getLogger(__name__)

TicketState = Literal["reserved", "running", "done"]


class QueueFullError(RuntimeError):
    """Every slot is busy and the waiting line is full."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"the server is busy answering other questions; try again in {retry_after} s"
        )


class TicketBase:
    """A place in line, then a computing slot, then nothing: the life every ticket has.

    `release` and `cancel` are idempotent and either gives back whatever the ticket
    holds, so every way a stream ends gives its capacity back. Subclasses say how to
    wait for a slot and how to give a place back.
    """

    state: TicketState = "reserved"
    number: int
    _finalizer: weakref.finalize[Any, Any]

    @property
    def done(self) -> bool:
        """Released or cancelled: the ticket holds nothing any more."""
        return self.state == "done"

    async def acquire(self) -> None:
        """Wait for a computing slot; cancelled, the ticket gives back what it holds."""
        if self.state != "reserved":
            raise RuntimeError(f"ticket {self.number} is {self.state}, not waiting")
        try:
            await self._wait_for_slot()
        except BaseException:
            self._finish()
            raise
        if self.done:  # cancelled while its slot was being handed over
            raise asyncio.CancelledError
        self.state = "running"

    def release(self) -> None:
        """Give the slot back once the run is over."""
        self._finish()

    def cancel(self) -> None:
        """Leave the line without running (the client went away first)."""
        self._finish()

    def _finish(self) -> None:
        if self.done:
            return
        self.state = "done"
        self._finalizer.detach()
        self._give_back()

    async def _wait_for_slot(self) -> None:
        raise NotImplementedError

    def _give_back(self) -> None:
        raise NotImplementedError


class Ticket(TicketBase):
    """A place in this process's line. A ticket dropped without `release` or `cancel`
    (a response abandoned before its body started) gives its place back when collected."""

    def __init__(self, number: int, queue: RunQueue) -> None:
        self.number = number
        self.queue = queue
        self.state = "reserved"
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._finalizer = weakref.finalize(self, _abandoned, queue, number, loop)
        self._finalizer.atexit = False

    def __repr__(self) -> str:
        return f"Ticket(number={self.number}, state={self.state!r})"

    @property
    def position(self) -> int:
        """How many tickets wait ahead of this one (0: next, or running)."""
        return self.queue._position(self.number) if self.state == "reserved" else 0

    async def _wait_for_slot(self) -> None:
        await self.queue._start(self.number)

    def _give_back(self) -> None:
        self.queue._leave(self.number)


def _abandoned(queue: RunQueue, number: int, loop: asyncio.AbstractEventLoop | None) -> None:
    """A ticket was collected while it still held a place: give the place back.

    Garbage collection may run on any thread, and the queue belongs to its event loop.
    """
    logger.debug("ticket %d dropped without release; its place is given back", number)
    try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    if loop is None or current is loop:
        queue._leave(number)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(queue._leave, number)


class RunQueue:
    def __init__(
        self,
        concurrency: int,
        max_waiting: int,
        seconds_per_run: float = 20.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_sizes(concurrency, max_waiting)
        self.concurrency = concurrency
        self.max_waiting = max_waiting
        self.seconds_per_run = seconds_per_run
        self._clock = clock
        self._line: dict[int, None] = {}  # reserved, not started, in reservation order
        self._started: dict[int, float] = {}  # running ticket -> when it got its slot
        self._blocked: dict[int, asyncio.Future[None]] = {}  # waiting inside `acquire`
        self._numbers = itertools.count()

    @property
    def capacity(self) -> int:
        """Reservations admitted at once: every slot busy and the line full."""
        return self.concurrency + self.max_waiting

    @property
    def running(self) -> int:
        return len(self._started)

    @property
    def waiting(self) -> int:
        """Reservations that must wait for a run to finish (beyond the free slots)."""
        return max(0, len(self._line) - self._free())

    async def admit(self) -> Ticket:
        """`reserve`, as the shared queue offers it (it asks Redis)."""
        return self.reserve()

    async def check_store(self) -> None:
        """Nothing to check: the line lives in this process."""

    async def aclose(self) -> None:
        """Nothing to give back: the line ends with the process."""

    def reserve(self) -> Ticket:
        """A ticket, or `QueueFullError` when all slots run and the line is full."""
        if len(self._line) + len(self._started) >= self.capacity:
            raise QueueFullError(self._retry_after())
        number = next(self._numbers)
        self._line[number] = None
        return Ticket(number, self)

    def snapshot(self) -> dict[str, int]:
        return {
            "running": self.running,
            "waiting": self.waiting,
            "concurrency": self.concurrency,
            "max_waiting": self.max_waiting,
        }

    def _free(self) -> int:
        return max(0, self.concurrency - len(self._started))

    def _position(self, number: int) -> int:
        if number not in self._line:
            return 0
        ahead = sum(1 for n in self._line if n < number)
        return max(0, ahead - self._free())

    def _retry_after(self) -> int:
        oldest = self._clock() - min(self._started.values()) if self._started else None
        return retry_after(self.seconds_per_run, self.concurrency, oldest)

    async def _start(self, number: int) -> None:
        """Move `number` from the line to a slot, waiting while every slot is busy."""
        # Slots are handed out as soon as they free (see `_dispatch`), so a free slot
        # here means nobody is blocked ahead: take it.
        if number in self._line and len(self._started) < self.concurrency:
            self._grant(number)
            return
        granted = asyncio.get_running_loop().create_future()
        self._blocked[number] = granted
        try:
            await granted  # a cancelled wait is cleaned up by `Ticket.acquire`
        finally:
            self._blocked.pop(number, None)

    def _grant(self, number: int) -> None:
        self._line.pop(number, None)
        self._started[number] = self._clock()

    def _leave(self, number: int) -> None:
        """Forget `number` wherever it is, and hand a freed slot to the next in line."""
        self._line.pop(number, None)
        self._started.pop(number, None)
        waiter = self._blocked.pop(number, None)
        if waiter is not None and not waiter.done():
            waiter.cancel()
        self._dispatch()

    def _dispatch(self) -> None:
        while len(self._started) < self.concurrency and self._blocked:
            number = min(self._blocked)
            waiter = self._blocked.pop(number)
            if waiter.done():
                continue  # cancelled; its `acquire` cleans up
            self._grant(number)
            waiter.set_result(None)


def check_sizes(concurrency: int, max_waiting: int) -> None:
    """A run queue needs a slot, and a line that is not negative."""
    if concurrency < 1 or max_waiting < 0:
        raise ValueError("concurrency must be at least 1 and max_waiting at least 0")


def retry_after(seconds_per_run: float, concurrency: int, oldest_age: float | None) -> int:
    """Seconds until a place is likely to open: when the oldest run (`oldest_age` seconds
    old; None when none runs yet) should end.

    Never less than the average gap between two ends (a run past its estimate says
    nothing about when it ends), nor less than a second.
    """
    if oldest_age is None:
        expected = seconds_per_run  # all admitted, none started yet
    else:
        expected = max(seconds_per_run - oldest_age, seconds_per_run / concurrency)
    return max(1, math.ceil(expected))


class RunTicket(Protocol):
    """What the service needs of a place in line (`Ticket`, `SharedTicket`)."""

    @property
    def done(self) -> bool: ...
    @property
    def position(self) -> int: ...
    async def acquire(self) -> None: ...
    def release(self) -> None: ...
    def cancel(self) -> None: ...


class RunLine(Protocol):
    """What the service needs of a run queue (`RunQueue`, `SharedRunQueue`)."""

    concurrency: int

    async def admit(self) -> RunTicket: ...
    def snapshot(self) -> Mapping[str, int | bool]: ...
    async def check_store(self) -> None: ...
    async def aclose(self) -> None: ...
