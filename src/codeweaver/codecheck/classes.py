"""A class's lineage: itself and its bases, each resolved to a class the index read, or
None where a base cannot be (then nothing is certain about what the class lacks).

griffe's own method resolution order silently drops a base it cannot resolve, and
typeshed's builtins inherit from `typing`'s generic aliases (`class dict(MutableMapping[_KT,
_VT])`), which the standard library's `typing.py` defines as assignments, not classes:
`dict.update` looked missing. A base named in `typing` is looked up where the alias
points, `collections.abc` (`_collections_abc`, pure Python).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Bases that add no members a program calls.
IGNORED = frozenset({
    "object", "builtins.object", "Generic", "typing.Generic", "Protocol", "typing.Protocol",
    "typing_extensions.Protocol",
})  # fmt: skip
ABC_HOMES = ("collections.abc.", "_collections_abc.")
MAX_CLASSES = 64  # a lineage longer than this is not one a snippet's check needs


class Lineages:
    """Lineages of classes, resolved with `get` (the index's path lookup), cached."""

    def __init__(self, get: Callable[[str], Any | None]) -> None:
        self._get = get
        self._cache: dict[str, list[Any | None]] = {}

    def of(self, cls: Any) -> list[Any | None]:
        """`cls` then its bases, depth first, each once; None for a base not resolved."""
        key = str(cls.path)
        if key not in self._cache:
            self._cache[key] = []  # a cycle reads as nothing more
            self._cache[key] = self._walk(cls)
        return self._cache[key]

    def _walk(self, cls: Any) -> list[Any | None]:
        found: list[Any | None] = []
        seen: set[str] = set()
        stack: list[Any | None] = [cls]
        while stack and len(found) < MAX_CLASSES:
            current = stack.pop()
            if current is None:
                found.append(None)
                continue
            if str(current.path) in seen:
                continue
            seen.add(str(current.path))
            found.append(current)
            bases = [self._base(b) for b in getattr(current, "bases", None) or ()]
            stack.extend(reversed([b for b in bases if b is not _IGNORE]))
        return found

    def _base(self, base: Any) -> Any | None:
        path = base if isinstance(base, str) else getattr(base, "canonical_path", None)
        if not path:
            return None
        path = str(path)
        if path in IGNORED:
            return _IGNORE
        candidates = [path]
        if path.startswith("typing."):
            leaf = path.removeprefix("typing.")
            candidates += [home + leaf for home in ABC_HOMES]
        for candidate in candidates:
            obj = self._get(candidate)
            if obj is not None and getattr(obj, "is_class", False):
                return obj
        return None


_IGNORE: Any = object()
