"""Ctrl-C while an answer runs: stop it at once and say so.

The model may be computing in a worker thread that nothing can interrupt (a blocking
llama.cpp call, a provider's HTTP request). Cancelling the run returns control at once;
the run's own cleanup still removes the unanswered question from the thread. The thread
is left to finish by itself, so a command that stops must not wait for it at exit
(`leave_now`): Python joins worker threads when it exits normally.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable
from typing import NoReturn, TypeVar

T = TypeVar("T")


async def stoppable(work: Awaitable[T]) -> tuple[T | None, bool]:
    """Run `work`; Ctrl-C cancels it. Returns its result and whether it was stopped."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    stopped = False

    def on_interrupt() -> None:
        nonlocal stopped
        stopped = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
        return await task, False
    try:
        return await task, False
    except asyncio.CancelledError:
        if not stopped:
            raise
        return None, True
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def leave_now(code: int) -> NoReturn:
    """Exit without waiting for a model call still computing in a worker thread."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
