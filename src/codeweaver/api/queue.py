"""A bounded queue in front of answer computation.

A local model computes one answer at a time on a few cores; more requests wait their turn
in order, up to a limit, and beyond it the API answers 503 with `Retry-After` instead of
piling work up. Waiting happens on the event loop (inference itself runs in worker
threads), so health checks and other requests stay fast.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass


class QueueFullError(RuntimeError):
    """Every slot is busy and the waiting line is full."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"the server is busy answering other questions; try again in {retry_after} s"
        )


@dataclass
class Ticket:
    """A place in line, taken before the response starts (so a full line is a 503)."""

    number: int
    queue: RunQueue

    @property
    def position(self) -> int:
        """How many tickets wait ahead of this one (0: next, or running)."""
        return sum(1 for n in self.queue._waiting if n < self.number)

    async def acquire(self) -> None:
        """Wait for a computing slot; the ticket leaves the line however this ends."""
        try:
            await self.queue._slots.acquire()
        finally:
            self.queue._waiting.discard(self.number)
        self.queue.running += 1

    def release(self) -> None:
        self.queue.running -= 1
        self.queue._slots.release()

    def cancel(self) -> None:
        """Leave the line without running (the client went away first)."""
        self.queue._waiting.discard(self.number)


class RunQueue:
    def __init__(self, concurrency: int, max_waiting: int, seconds_per_run: float = 20.0) -> None:
        self.concurrency = concurrency
        self.max_waiting = max_waiting
        self.seconds_per_run = seconds_per_run
        self.running = 0
        self._slots = asyncio.Semaphore(concurrency)
        self._waiting: set[int] = set()
        self._numbers = itertools.count()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def reserve(self) -> Ticket:
        """A ticket, or `QueueFullError` when all slots run and the line is full."""
        busy = self.running + len(self._waiting) >= self.concurrency
        if busy and len(self._waiting) >= self.max_waiting:
            ahead = len(self._waiting) + self.running
            raise QueueFullError(max(1, round(ahead * self.seconds_per_run / self.concurrency)))
        ticket = Ticket(next(self._numbers), self)
        self._waiting.add(ticket.number)
        return ticket

    def snapshot(self) -> dict[str, int]:
        return {
            "running": self.running,
            "waiting": self.waiting,
            "concurrency": self.concurrency,
            "max_waiting": self.max_waiting,
        }
