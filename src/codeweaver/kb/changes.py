"""This process's count of knowledge-base changes, which cached answers about it key on."""

from __future__ import annotations

import threading

_generation = 0
_generation_lock = threading.Lock()


def generation() -> int:
    """Bumped on every change in this process, so cached "is it empty?" answers can expire."""
    return _generation


def bump() -> None:
    """Count one change (any thread may make it)."""
    global _generation
    with _generation_lock:
        _generation += 1
