"""Background work on this machine waits while a local model computes an answer.

llama.cpp spreads each token over every core and its threads meet at a barrier many times
per token: a thread of any other work on one core, even at the lowest priority, holds the
whole answer at every barrier. Measured here: an answer that took 13.5 s alone took 410 s
while the docs vectors were being embedded at nice 19 on the other core.

Lowering the background work's priority makes it worse: starved of CPU, a step it began
before the answer lasts for the whole answer. So the two never overlap. A model call holds
a shared lock on one file per user for its duration, after waiting for the background
step under way, if any, to end (`computing`); background work runs in small steps, each
begun only when no model computes, under an exclusive lock of its own (`background_step`).
Any process takes part: the in-process model of `ask`, `chat`, `serve` or `mcp`, and
`codeweaver model serve` for the requests it is computing. The locks are the system's
(`flock`): a process that dies lets go of its own.
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


def lock_file(what: str) -> Path:
    """One file per user of the machine and purpose, whatever each process's cache folder."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"codeweaver-{uid}-{what}.lock"


def busy_file() -> Path:
    return lock_file("model-busy")


@contextlib.contextmanager
def _held(path: Path, flags: object) -> Iterator[bool]:
    """`path` locked with `flags` for the block (False: no lock could be had, go on)."""
    import portalocker

    try:
        handle = path.open("a")
    except OSError as exc:
        logger.debug("no lock %s: %s", path, exc)
        yield False
        return
    try:
        try:
            portalocker.lock(handle, flags)  # type: ignore[arg-type]
            locked = True
        except (portalocker.exceptions.LockException, OSError) as exc:
            logger.debug("no lock %s: %s", path, exc)
            locked = False
        yield locked
    finally:
        handle.close()  # closing lets go of the lock


@contextlib.contextmanager
def computing() -> Iterator[None]:
    """Hold the machine's "a model is computing" lock (shared: models never wait for one
    another) for the block, once the background step under way has ended."""
    import portalocker

    with _held(busy_file(), portalocker.LockFlags.SHARED):
        with _held(lock_file("background-step"), portalocker.LockFlags.SHARED):
            pass  # waits for a background step that began before this call
        yield


@contextlib.contextmanager
def background_step(poll: float = POLL_SECONDS) -> Iterator[None]:
    """One small step of background work, begun once no model computes; a model call
    that starts meanwhile waits for it to end."""
    import portalocker

    while True:
        wait_for_idle(poll)
        with _held(lock_file("background-step"), portalocker.LockFlags.EXCLUSIVE):
            if model_computing():  # a call began between the check and the lock
                continue
            yield
            return


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
