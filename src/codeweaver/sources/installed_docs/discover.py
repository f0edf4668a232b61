"""Which modules to read: installed distributions and their `.py` files, stdlib `.py` files
and the built-in/C-extension stdlib modules, minus deny-lists (easter eggs, GUIs, tests)."""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from codeweaver.sources.installed_docs.model import CollectorOptions

#: Never parsed nor imported: easter eggs, GUIs, the IDE, test suites.
DENY_TOP_LEVEL = frozenset(
    {"antigravity", "this", "idlelib", "turtle", "turtledemo", "test", "_tkinter", "__main__"}
)
#: C modules never imported (terminal/GUI side effects, test helpers).
DENY_IMPORT = frozenset({"readline", "_curses", "_curses_panel", "_tkinter", "_ctypes_test"})
_TEST_MODULE = re.compile(r"^_?(test|xx)|_test$")
_SKIP_DIRS = frozenset({"test", "tests", "__pycache__", "site-packages", "dist-packages"})


@dataclass(frozen=True)
class DistInfo:
    name: str
    version: str
    dist: metadata.Distribution

    @property
    def canonical(self) -> str:
        return re.sub(r"[-_.]+", "-", self.name).lower()


# --------------------------------------------------------------------------- distributions


def list_distributions(options: CollectorOptions) -> list[DistInfo]:
    """Installed distributions (first one wins on duplicates), cheap: reads METADATA only."""
    if not options.include_distributions:
        return []
    if options.paths is None:
        found: Iterable[metadata.Distribution] = metadata.distributions()
    else:
        found = metadata.distributions(path=[str(p) for p in options.paths])
    seen: dict[str, DistInfo] = {}
    for dist in found:
        try:
            name, version = dist.name, dist.version
        except Exception:  # broken metadata: skip the distribution
            continue
        if not name or not version:
            continue
        info = DistInfo(name, version, dist)
        seen.setdefault(info.canonical, info)
    return sorted(seen.values(), key=lambda d: d.canonical)


def dist_url(dist: metadata.Distribution) -> str:
    """Project-URL Documentation, else Homepage (or Home-page), else ""."""
    meta = dist.metadata
    urls: dict[str, str] = {}
    for item in meta.get_all("Project-URL") or []:
        label, _, url = item.partition(",")
        urls.setdefault(re.sub(r"[^a-z]", "", label.lower()), url.strip())
    for label in ("documentation", "docs", "doc", "homepage", "home"):
        if urls.get(label):
            return urls[label]
    home = [u for u in meta.get_all("Home-page") or [] if u and u.upper() != "UNKNOWN"]
    return home[0].strip() if home else ""


def dist_modules(info: DistInfo) -> Iterator[tuple[str, bool, Path]]:
    root = Path(str(info.dist.locate_file("")))
    for file in info.dist.files or []:
        parts = file.parts
        if not parts or file.suffix != ".py" or ".." in parts:
            continue
        module = _module_name(parts)
        if module is not None:
            yield module, parts[-1] == "__init__.py", root.joinpath(*parts)


def _module_name(parts: tuple[str, ...]) -> str | None:
    stem = parts[-1][:-3]
    names = list(parts[:-1]) + ([] if stem == "__init__" else [stem])
    if not names or not all(n.isidentifier() for n in names):
        return None
    if any(n in _SKIP_DIRS or n == "conftest" for n in names) or names[0] in DENY_TOP_LEVEL:
        return None
    if stem.startswith("test_") or stem.endswith("_test") or stem == "__main__":
        return None
    return ".".join(names)


# --------------------------------------------------------------------------- stdlib files


def stdlib_dir(options: CollectorOptions) -> Path:
    return options.stdlib_dir or Path(sysconfig.get_paths()["stdlib"])


def stdlib_modules(
    root: Path, names: frozenset[str] = frozenset()
) -> Iterator[tuple[str, bool, Path]]:
    """(module, is package, file) of the stdlib in `root`; `names`: that Python's
    `sys.stdlib_module_names` (empty: the running Python's)."""
    known = names or sys.stdlib_module_names
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).parts
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d.isidentifier()
            and d not in _SKIP_DIRS
            and (rel or (d in known and d not in DENY_TOP_LEVEL))
            and (Path(dirpath, d, "__init__.py").exists())
        )
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            if not rel and (filename[:-3] not in known or filename[:-3] in DENY_TOP_LEVEL):
                continue
            module = _module_name((*rel, filename))
            if module is not None and module != "pydoc_data.topics":
                yield module, filename == "__init__.py", Path(dirpath, filename)


# --------------------------------------------------------------------------- C modules


def list_c_modules() -> list[str]:
    names = set(sys.builtin_module_names)
    dynload = Path(sysconfig.get_paths()["stdlib"]) / "lib-dynload"
    if dynload.is_dir():
        names.update(p.name.split(".")[0] for p in dynload.iterdir() if p.suffix == ".so")
    return sorted(
        n
        for n in names
        if n in sys.stdlib_module_names
        and n not in DENY_IMPORT
        and n not in DENY_TOP_LEVEL
        and not _TEST_MODULE.search(n)
    )
