"""A stream of events with a tick whenever a moment passes without one.

Doors use the ticks to say what has started but not yet ended (the searches of a round
start together; the first to end may take seconds) and that a long wait goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar

T = TypeVar("T")


async def with_ticks(events: AsyncGenerator[T, None], seconds: float) -> AsyncIterator[T | None]:
    """`events`, with None whenever `seconds` pass without one.

    One task reads `events` from start to end (its context variables stay with it);
    closing this generator cancels that task, which closes `events` in its own task.
    """
    queue: asyncio.Queue[tuple[bool, T | BaseException | None]] = asyncio.Queue()

    async def read() -> None:
        try:
            async with contextlib.aclosing(events) as stream:
                async for event in stream:
                    await queue.put((False, event))
        except Exception as exc:  # handed to the reader, raised there
            await queue.put((True, exc))
            return
        await queue.put((True, None))

    reader = asyncio.ensure_future(read())
    try:
        while True:
            try:
                ended, item = await asyncio.wait_for(queue.get(), timeout=seconds)
            except TimeoutError:
                yield None
                continue
            if ended:
                if isinstance(item, BaseException):
                    raise item
                return
            yield item  # type: ignore[misc]
    finally:
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
