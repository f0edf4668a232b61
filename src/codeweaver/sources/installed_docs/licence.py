"""The licence an installed-docs result is attributed to, read from package metadata.

A result's attribution is `"licence: <licence>"` when the licence is known and `""`
otherwise, never `None` (which the API and the page would show as the word "None").
Read when a result is made, not stored in the index, so older indexes need no rebuild.
"""

from __future__ import annotations

import importlib.metadata as metadata
import threading
from pathlib import Path

#: The stdlib's docstrings and the language-reference topics are Python's own.
PYTHON_LICENCE = "PSF-2.0"
# A `License:` field longer than this is the licence's full text, not its name.
_MAX_NAME = 64
_UNKNOWN = frozenset({"", "unknown", "none", "other", "other/proprietary license"})
_IGNORED = _UNKNOWN | {"osi approved"}  # a classifier level, not a licence


def dist_licence(dist: metadata.Distribution) -> str:
    """License-Expression (PEP 639), else a short License field, else a licence classifier."""
    meta = dist.metadata
    for field in ("License-Expression", "License"):
        value = " ".join(str((meta.get_all(field) or [""])[0]).split())
        if value.lower() not in _UNKNOWN and len(value) <= _MAX_NAME:
            return value
    for classifier in meta.get_all("Classifier") or []:
        parts = [p.strip() for p in str(classifier).split("::")]
        name = parts[-1]
        if len(parts) > 1 and parts[0] == "License" and name.lower() not in _IGNORED:
            return name
    return ""


def attribution(licence: str) -> str:
    """What a result shows as its attribution: the licence, or nothing when unknown."""
    return f"licence: {licence}" if licence else ""


class Licences:
    """Licence of each indexed package version, looked up once in `paths` (None: sys.path)."""

    def __init__(self, paths: tuple[Path, ...] | None) -> None:
        self._paths = None if paths is None else [str(p) for p in paths]
        self._known: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def of(self, package: str, version: str) -> str:
        if package == "python":
            return PYTHON_LICENCE
        key = (package, version)
        with self._lock:
            if key in self._known:
                return self._known[key]
        found = self._lookup(package, version)
        with self._lock:
            self._known[key] = found
        return found

    def _lookup(self, package: str, version: str) -> str:
        try:
            found = (
                metadata.distributions(name=package)
                if self._paths is None
                else metadata.distributions(name=package, path=self._paths)
            )
            for dist in found:
                # Only the version that was indexed: another one may be licensed otherwise.
                if dist.version == version:
                    return dist_licence(dist)
        except Exception:  # unreadable metadata: no attribution rather than no result
            return ""
        return ""
