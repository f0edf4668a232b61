"""Collect documentation entries from the Python installed on this machine.

Third-party code and ordinary stdlib modules are never imported: their `.py` files are
parsed with `ast` (module, class, function and method docstrings and signatures; see
`ast_docs`). Only built-in and C-extension stdlib modules (which have no source) are imported
and read with `inspect` (`cmodules`), minus a deny-list of modules with side effects
(`discover`). `pydoc_data.topics` (a plain dict) supplies the language-reference topics
(`for`, `with`, `typesseq`, ...). Each definition is then published under the public name
users import it by (`names`).

This module orchestrates the collection and re-exports what `indexer`, `source` and the
package import from it.
"""

from __future__ import annotations

import logging
import platform
import warnings

from codeweaver.sources.installed_docs.ast_docs import parse_file
from codeweaver.sources.installed_docs.cmodules import inspect_c_module
from codeweaver.sources.installed_docs.discover import (
    DENY_IMPORT,
    DENY_TOP_LEVEL,
    DistInfo,
    dist_modules,
    dist_url,
    list_c_modules,
    list_distributions,
    stdlib_dir,
    stdlib_modules,
)
from codeweaver.sources.installed_docs.model import (
    CollectorOptions,
    DocEntry,
    ProgressCallback,
    normalise_doc,
)
from codeweaver.sources.installed_docs.names import Group, finalise, is_public

__all__ = [
    "DENY_IMPORT",
    "DENY_TOP_LEVEL",
    "CollectorOptions",
    "DistInfo",
    "DocEntry",
    "ProgressCallback",
    "collect_entries",
    "collect_topics",
    "dist_url",
    "is_public",
    "list_distributions",
    "normalise_doc",
    "python_version",
    "stdlib_dir",
]

logger = logging.getLogger(__name__)


def python_version() -> str:
    return platform.python_version()


class _Progress:
    def __init__(self, callback: ProgressCallback | None, phase: str, total: int) -> None:
        self.callback, self.phase, self.total = callback, phase, total
        self.step = max(1, total // 100)
        self.done = 0
        self.report()

    def report(self) -> None:
        if self.callback is not None:
            self.callback(self.phase, self.done, self.total)

    def advance(self) -> None:
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            self.report()


def collect_entries(
    options: CollectorOptions, progress: ProgressCallback | None = None
) -> list[DocEntry]:
    """Every documentation entry the options select (slow: parses thousands of files)."""
    entries: list[DocEntry] = []
    version = python_version()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes etc. in parsed sources
        if options.include_stdlib or options.include_builtin_modules:
            c_modules = list_c_modules() if options.include_builtin_modules else []
            group = Group(c_modules=frozenset(c_modules))
            tracker = _Progress(progress, "Reading built-in modules", len(c_modules))
            for module in c_modules:
                inspect_c_module(group, module, options)
                tracker.advance()
            files = list(stdlib_modules(stdlib_dir(options))) if options.include_stdlib else []
            tracker = _Progress(progress, "Parsing the standard library", len(files))
            for module, is_package, path in files:
                parse_file(group, module, is_package, path, options)
                tracker.advance()
            entries += finalise(group, "python", "Python", version, "")
        if options.include_topics:
            entries += collect_topics(options)
        dists = list_distributions(options)
        work = [(info, m) for info in dists for m in dist_modules(info)]
        tracker = _Progress(progress, "Parsing installed packages", len(work))
        for info in dists:
            group = Group()
            for item in (m for i, m in work if i is info):
                parse_file(group, *item, options)
                tracker.advance()
            home = dist_url(info.dist)
            entries += finalise(group, info.canonical, info.name, info.version, home)
    logger.info("collected %d documentation entries", len(entries))
    return entries


def collect_topics(options: CollectorOptions) -> list[DocEntry]:
    """The language-reference topics behind `help("for")`, from `pydoc_data.topics`."""
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions strip pydoc_data
        return []
    version = python_version()
    return [
        DocEntry(
            name=label,
            kind="topic",
            module="",
            signature="",
            doc=normalise_doc(text)[: options.max_doc_chars],
            package="python",
            display="Python",
            version=version,
        )
        for label, text in sorted(topics.items())
    ]
