"""One turn at a time per thread: in this process, and across processes through a shared lock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

logger = logging.getLogger(__name__)

# Called once when a turn has to wait for another turn of its thread.
OnWait = Callable[[], None]
# Releases what `SharedLock` acquired.
Release = Callable[[], Awaitable[None]]
# Holds one thread against the other server processes (PostgreSQL's advisory lock):
# waits, calling `on_wait` while it does, and returns how to let go.
SharedLock = Callable[[str, OnWait], Awaitable[Release]]


async def finish(work: Awaitable[None]) -> None:
    """Await `work` to the end even if the caller is cancelled meanwhile (it then goes
    on in the background): a lock must not stay held because its holder was cancelled,
    as a request is when its client leaves (repeatedly, inside an AnyIO cancel scope)."""
    task = asyncio.ensure_future(work)
    await asyncio.shield(task)


class ThreadLocks:
    """One turn at a time per thread: in this process an asyncio lock per thread id, and
    across processes `shared` when the threads live in a shared database."""

    def __init__(self, shared: SharedLock | None = None) -> None:
        self._shared = shared
        # thread id -> (its lock, how many turns hold or wait for it); dropped at 0.
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(
        self,
        thread_id: str,
        on_wait: OnWait | None = None,
        before_release: Release | None = None,
    ) -> AsyncIterator[None]:
        """Wait until no other turn of `thread_id` runs, then hold it; `on_wait` is
        called once if that means waiting. Waiters get it in arrival order here.

        `before_release` runs while the thread is still held, once the block is left;
        it and the release are finished even if the holder is cancelled meanwhile.
        """
        said = False

        def waiting() -> None:
            nonlocal said
            if not said and on_wait is not None:
                said = True
                on_wait()

        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        held: asyncio.Lock | None = None
        release: Release | None = None
        try:
            if lock.locked():
                waiting()
            await lock.acquire()
            held = lock
            if self._shared is not None:
                release = await self._shared(thread_id, waiting)
            yield
        finally:
            whole = held is not None and (self._shared is None or release is not None)
            cleanup = before_release if whole else None
            await finish(self._leave(thread_id, held, release, cleanup))

    async def _leave(
        self,
        thread_id: str,
        held: asyncio.Lock | None,
        release: Release | None,
        cleanup: Release | None,
    ) -> None:
        try:
            for step in (cleanup, release):
                if step is None:
                    continue
                try:
                    await step()
                except Exception:
                    logger.warning("thread %s: could not let go cleanly", thread_id, exc_info=True)
        finally:
            if held is not None:
                held.release()
            lock, users = self._locks[thread_id]
            if users > 1:
                self._locks[thread_id] = (lock, users - 1)
            else:
                del self._locks[thread_id]
