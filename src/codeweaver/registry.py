"""One registry mechanism for everything pluggable: model providers, sources, embedders.

Built-ins register themselves with a decorator when their module is imported; the
registry imports those modules on first use. Other packages add their own through an
entry-point group, e.g. in their `pyproject.toml`:

    [project.entry-points."codeweaver.sources"]
    jira = "codeweaver_jira:create_jira_source"

The entry point's object is registered under the entry point's name (unless loading it
already registered that name through the decorator). A plugin that fails to load is
logged and reported by `failed_plugins()`; it never stops CodeWeaver from starting.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

Entry = TypeVar("Entry", bound=Callable[..., object])


class UnknownNameError(KeyError):
    """No entry of that name; the message lists the names there are."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Generic[Entry]):
    """Named factories of one kind, from built-in modules and entry-point plugins."""

    def __init__(self, kind: str, *, group: str, builtins: Sequence[str] = ()) -> None:
        self.kind = kind  # "source", "model provider", … (for messages)
        self.group = group  # the entry-point group plugins register under
        self._builtins = tuple(builtins)  # modules whose import registers the built-ins
        self._entries: dict[str, Entry] = {}
        self._failed: dict[str, str] = {}
        self._loaded = False
        self._lock = threading.RLock()

    def register(self, name: str) -> Callable[[Entry], Entry]:
        """Decorator: make a factory available under `name` (a later one replaces it)."""

        def decorate(entry: Entry) -> Entry:
            with self._lock:
                self._entries[name] = entry
            return entry

        return decorate

    def unregister(self, name: str) -> None:
        """Remove an entry, if there is one (a test's cleanup, a plugin replacing one)."""
        with self._lock:
            self._entries.pop(name, None)

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def get(self, name: str) -> Entry:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def failed_plugins(self) -> dict[str, str]:
        """Plugins of this group that could not be loaded, with the reason."""
        self._load()
        return dict(self._failed)

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            for module in self._builtins:
                importlib.import_module(module)
            for point in entry_points(group=self.group):
                try:
                    entry = point.load()
                except Exception as exc:  # a broken plugin is reported, not fatal
                    self._failed[point.name] = f"{type(exc).__name__}: {exc}"
                    logger.warning("%s plugin %r failed to load: %s", self.kind, point.name, exc)
                    continue
                if point.name not in self._entries and callable(entry):
                    self._entries[point.name] = entry
            self._loaded = True
