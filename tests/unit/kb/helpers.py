"""Shared by the knowledge-base safety tests: a fast embedder and a guard against hangs."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from codeweaver.embeddings.base import Vectors

T = TypeVar("T")
DIMENSION = 16


class FakeEmbedder:
    """Deterministic unit vectors from a hash of the text: no model is loaded."""

    def __init__(self, name: str = "minilm") -> None:
        self.name = name

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: list[str]) -> Vectors:
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:DIMENSION], dtype=np.uint8)
            for t in texts
        ]
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), DIMENSION) + 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True).astype(np.float32)
        return np.asarray(vectors / norms, dtype=np.float32)


def within(seconds: float, call: Callable[[], T], fifos: list[Path]) -> T:
    """`call()`, failing instead of hanging when it blocks on one of `fifos`.

    On time-out a writer opens and closes each FIFO, which releases a reader blocked in
    open() or read(), so the test fails with a message rather than stalling the suite.
    """
    outcome: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading this one
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        raise AssertionError(f"blocked for more than {seconds} s on a FIFO")
    if errors:
        raise errors[0]
    return outcome[0]


def deny_scandir(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """`os.scandir` fails with EACCES on `denied`, as a chmod 000 folder does for a user.

    Tests may run as root, for whom chmod 000 denies nothing.
    """
    real = os.scandir
    target = str(denied.resolve())

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if os.fspath(path) == target:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
