"""How long a call takes, cut short: a backtracking regular expression could run for
hours, and the regex engine checks for signals as it goes, so an alarm stops it."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow


def seconds(call: Callable[[], object], limit: float = 10.0) -> float:
    """Seconds `call()` takes, stopped at `limit` (main thread only: it uses SIGALRM)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started = time.perf_counter()
    try:
        call()
    except _TooSlow:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return time.perf_counter() - started
