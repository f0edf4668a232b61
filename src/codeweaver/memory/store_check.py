"""TEMPORARY stub (main engineer) until the store-check helper lands its module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoreProblem:
    reason: str
    detail: str


async def check_thread_store(store: Any) -> StoreProblem | None:
    return None
