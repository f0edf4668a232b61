"""How often installed code calls each name: a prior for APIs people actually use.

While the index is built, the source files the entries came from (the stdlib and every
installed package) are scanned for calls (`name(` and `.name(`, not `def name(`); an entry's
popularity is the count of its leaf name. `str.join` (thousands of calls) then outranks a
rarely called `numpy.lib.recfunctions.find_duplicates` when both match a question equally.
A regex, not `ast`: it only counts, and it keeps the build fast.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from codeweaver.sources.installed_docs.model import DocEntry

_CALL = re.compile(rb"(\bdef\s+|\bclass\s+)?(?<![\w])\.?([A-Za-z_]\w*)\s*\(")
MAX_FILE_BYTES = 800_000


def count_calls(entries: Iterable[DocEntry]) -> dict[str, int]:
    """Calls of each entry leaf name across the entries' source files."""
    leaves = {e.name.rpartition(".")[2] for e in entries if e.kind != "topic"}
    paths = {e.path for e in entries if e.path}
    counts: Counter[str] = Counter()
    for path in sorted(paths):
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        if len(data) <= MAX_FILE_BYTES:
            # `def name(` and `class name(` define, they do not call.
            counts.update(name.decode() for keyword, name in _CALL.findall(data) if not keyword)
    return {name: counts[name] for name in sorted(leaves) if counts[name]}


def popularity_weights(entries: list[DocEntry], counts: dict[str, int], beta: float) -> list[float]:
    """`((1 + ln(1 + calls)) / (1 + ln(1 + most calls))) ** beta` per entry (topics: 1)."""
    top = 1.0 + math.log1p(max(counts.values(), default=0))
    return [
        1.0
        if e.kind == "topic"
        else ((1.0 + math.log1p(counts.get(e.name.rpartition(".")[2], 0))) / top) ** beta
        for e in entries
    ]
