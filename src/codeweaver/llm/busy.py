"""Background work on this machine waits while a local model computes an answer.

llama.cpp spreads each token over every core and its threads meet at a barrier many times
per token: a thread of any other work on one core, even at the lowest priority, holds the
whole answer at every barrier. Measured here: an answer that took 13.5 s alone took 410 s
while the docs vectors were being embedded at nice 19 on the other core.

So a model call holds a shared lock on one file per user for its duration (`computing`),
and background work asks between two small steps whether any is held (`wait_for_idle`)
and waits until none is. Any process takes part: the in-process model of `ask`, `chat`,
`serve` or `mcp`, and `codeweaver model serve` for the requests it is computing. The
locks are the system's (`flock`): a process that dies lets go of its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5


def busy_file() -> Path:
    """One file per user of the machine, whatever each process's cache folder."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"codeweaver-{uid}-model-busy.lock"


@contextlib.contextmanager
def computing() -> Iterator[None]:
    """Hold the machine's "a model is computing" lock (shared: models never wait for one
    another) for the block; without file locks, just run the block."""
    try:
        import portalocker

        handle = busy_file().open("a")
    except OSError as exc:
        logger.debug("no model-busy lock: %s", exc)
        yield
        return
    try:
        try:
            portalocker.lock(handle, portalocker.LockFlags.SHARED)
        except (portalocker.exceptions.LockException, OSError) as exc:
            logger.debug("no model-busy lock: %s", exc)
        yield
    finally:
        handle.close()  # closing lets go of the lock


def model_computing() -> bool:
    """Whether a model on this machine is computing an answer now."""
    import portalocker

    try:
        with busy_file().open("a") as handle:
            flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
            portalocker.lock(handle, flags)
            portalocker.unlock(handle)
    except portalocker.exceptions.LockException:
        return True
    except OSError:
        return False
    return False


def wait_for_idle(poll: float = POLL_SECONDS) -> float:
    """Wait while a model computes; the seconds waited."""
    started = time.monotonic()
    while model_computing():
        time.sleep(poll)
    return time.monotonic() - started
