"""Collect documentation entries from the Python installed on this machine.

Third-party code and ordinary stdlib modules are never imported: their `.py` files are
parsed with `ast` (module, class, function and method docstrings and signatures; see
`ast_docs`). Only built-in and C-extension stdlib modules (which have no source) are imported
and read with `inspect` (`cmodules`), minus a deny-list of modules with side effects
(`discover`). `pydoc_data.topics` (a plain dict) supplies the language-reference topics
(`for`, `with`, `typesseq`, ...). Each definition is then published under the public name
users import it by (`names`).

Another Python's environment (a project's, `project`) is read the same way from its folders
(`CollectorOptions.paths`, `.stdlib_dir`); its stdlib entries carry its version. Built-in
modules can only be read from the running Python; the topics are read from that Python's
`pydoc_data/topics.py` with `ast.literal_eval`.

Entries of each distribution are kept in a parse cache when a folder is given
(`parsed_dir`): one JSONL file per distribution, keyed by its name, version and home page,
the size and time of each of its source files, the options that shape entries and the
parser's own source. Installing one package then re-parses only that package. Files unused
for `PARSED_MAX_AGE` seconds are removed after a collection.

This module orchestrates the collection and re-exports what `indexer`, `source` and the
package import from it.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import platform
import time
import uuid
import warnings
from functools import lru_cache
from hashlib import sha256
from pathlib import Path

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
from codeweaver.sources.installed_docs.made_docs import resolve
from codeweaver.sources.installed_docs.model import (
    CollectorOptions,
    DocEntry,
    ProgressCallback,
    PythonFacts,
    normalise_doc,
)
from codeweaver.sources.installed_docs.names import Definition, Group, finalise, is_public

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
    "same_minor",
    "stdlib_dir",
]

logger = logging.getLogger(__name__)


PARSED_FORMAT = 1
PARSED_MAX_AGE = 30 * 86400
#: The modules whose code shapes a distribution's entries (part of the parse-cache key).
_PARSER_MODULES = (
    "ast_docs.py", "made_docs.py", "names.py", "model.py", "discover.py", "collect.py",
)  # fmt: skip


def python_version() -> str:
    return platform.python_version()


def same_minor(version: str) -> bool:
    """Whether `version` (`3.12.1`) is the running Python's `major.minor`."""
    return version.split(".")[:2] == python_version().split(".")[:2]


class _Progress:
    def __init__(self, callback: ProgressCallback | None, phase: str, total: int) -> None:
        self.callback, self.phase, self.total = callback, phase, total
        self.step = max(1, total // 100)
        self.done = 0
        self.report()

    def report(self) -> None:
        if self.callback is not None:
            self.callback(self.phase, self.done, self.total)

    def advance(self, count: int = 1) -> None:
        before, self.done = self.done, self.done + count
        if self.done // self.step != before // self.step or self.done == self.total:
            self.report()


def collect_entries(
    options: CollectorOptions,
    progress: ProgressCallback | None = None,
    parsed_dir: Path | None = None,
) -> list[DocEntry]:
    """Every documentation entry the options select (slow: parses thousands of files);
    `parsed_dir`: the parse cache of distributions (None: parse everything)."""
    entries: list[DocEntry] = []
    facts = options.python
    version = facts.version if facts else python_version()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes etc. in parsed sources
        if options.include_stdlib or options.include_builtin_modules:
            c_modules = list_c_modules() if options.include_builtin_modules else []
            group = Group(c_modules=frozenset(c_modules))
            tracker = _Progress(progress, "Reading built-in modules", len(c_modules))
            for module in c_modules:
                inspect_c_module(group, module, options)
                tracker.advance()
            names = facts.stdlib_names if facts else frozenset()
            root = stdlib_dir(options)
            files = list(stdlib_modules(root, names)) if options.include_stdlib else []
            tracker = _Progress(progress, "Parsing the standard library", len(files))
            for module, is_package, path in files:
                parse_file(group, module, is_package, path, options)
                tracker.advance()
            add_made_docs(group, options)
            entries += finalise(group, "python", "Python", version, "")
        if options.include_topics:
            entries += collect_topics(options)
        dists = list_distributions(options)
        modules = [list(dist_modules(info)) for info in dists]
        tracker = _Progress(progress, "Parsing installed packages", sum(map(len, modules)))
        cache = _ParsedCache(parsed_dir, options) if parsed_dir is not None else None
        for info, files_of_dist in zip(dists, modules, strict=True):
            entries += _dist_entries(info, files_of_dist, options, tracker, cache)
        if cache is not None:
            logger.info("parse cache: %d of %d distributions reused", cache.hits, len(dists))
            cache.prune()
    logger.info("collected %d documentation entries", len(entries))
    return entries


def _dist_entries(
    info: DistInfo,
    modules: list[tuple[str, bool, Path]],
    options: CollectorOptions,
    tracker: _Progress,
    cache: _ParsedCache | None,
) -> list[DocEntry]:
    home = dist_url(info.dist)
    path = cache.path(info, home, modules) if cache is not None else None
    if cache is not None and path is not None:
        cached = cache.load(path)
        if cached is not None:
            tracker.advance(len(modules))
            return cached
    group = Group()
    for item in modules:
        parse_file(group, *item, options)
        tracker.advance()
    add_made_docs(group, options)
    found = finalise(group, info.canonical, info.name, info.version, home)
    if cache is not None and path is not None:
        cache.save(path, found)
    return found


def add_made_docs(group: Group, options: CollectorOptions) -> None:
    """Add the definitions whose docstrings the code writes at import time (`made_docs`),
    once every module of the group is read: their parts live in other modules."""
    made = group.made
    if not made.pending and not made.newdocs:
        group.made = type(made)(imported=made.imported)
        return
    literal = {(d.module, d.qualname): d.doc for d in group.defs}
    for found in resolve(made, literal):
        doc = normalise_doc(found.doc)[: options.max_doc_chars]
        if doc:
            group.defs.append(Definition(*found[:4], doc, found.path))
    group.made = type(made)(imported=made.imported)  # its parse trees are no longer needed


# --------------------------------------------------------------------------- parse cache


@lru_cache(maxsize=1)
def _parser_id() -> str:
    """Digest of the parser's source: a changed parser never reuses old entries."""
    digest = sha256()
    for name in _PARSER_MODULES:
        try:
            digest.update(Path(__file__).with_name(name).read_bytes())
        except OSError:  # no source files (a zipped install): entries still keyed by version
            digest.update(name.encode())
    return digest.hexdigest()[:16]


class _ParsedCache:
    """Entries of each distribution as last parsed, one JSONL file each (module docstring)."""

    def __init__(self, folder: Path, options: CollectorOptions) -> None:
        self.folder = folder
        self.hits = 0
        self._base = {
            "format": PARSED_FORMAT,
            "parser": _parser_id(),
            "max_file_bytes": options.max_file_bytes,
            "max_doc_chars": options.max_doc_chars,
        }

    def path(self, info: DistInfo, home: str, modules: list[tuple[str, bool, Path]]) -> Path:
        files: list[list[object]] = []
        for module, is_package, file in modules:
            try:
                stat = file.stat()
                stamp: list[int] | None = [stat.st_size, stat.st_mtime_ns]
            except OSError:
                stamp = None
            files.append([module, is_package, str(file), stamp])
        material = {
            **self._base,
            "dist": [info.canonical, info.name, info.version, home],
            "files": files,
        }
        key = sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]
        return self.folder / f"{info.canonical}-{key}.jsonl"

    def load(self, path: Path) -> list[DocEntry] | None:
        try:
            with path.open(encoding="utf-8") as handle:
                found = [DocEntry.from_dict(json.loads(line)) for line in handle if line.strip()]
            os.utime(path)  # recently used: kept by `prune`
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:  # unreadable: parse again
            logger.debug("ignoring parse cache file %s: %s", path, exc)
            return None
        self.hits += 1
        return found

    def save(self, path: Path, entries: list[DocEntry]) -> None:
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("w", encoding="utf-8") as handle:
                for entry in entries:
                    handle.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
            os.replace(tmp, path)
        except OSError as exc:  # a read-only cache only costs the next build a re-parse
            logger.debug("cannot write parse cache file %s: %s", path, exc)
        finally:
            tmp.unlink(missing_ok=True)

    def prune(self) -> None:
        """Remove files no build used for `PARSED_MAX_AGE` (other environments' files stay
        while any build of theirs keeps using them)."""
        cutoff = time.time() - PARSED_MAX_AGE
        try:
            children = list(self.folder.iterdir())
        except OSError:
            return
        for child in children:
            try:
                if child.suffix in {".jsonl", ".tmp"} and child.stat().st_mtime < cutoff:
                    child.unlink()
            except OSError:
                continue


# --------------------------------------------------------------------------- topics


def collect_topics(options: CollectorOptions) -> list[DocEntry]:
    """The language-reference topics behind `help("for")`, from `pydoc_data.topics` (of the
    indexed Python: read from its file when it is not the running one)."""
    facts = options.python
    topics = _own_topics() if facts is None else _other_topics(options, facts)
    version = facts.version if facts else python_version()
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


def _own_topics() -> dict[str, str]:
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions strip pydoc_data
        return {}
    return dict(topics)


def _other_topics(options: CollectorOptions, facts: PythonFacts) -> dict[str, str]:
    """`topics = {...}` of another Python's `pydoc_data/topics.py`, as a literal (its code is
    never run); the running Python's own when that file is unusable and the versions agree."""
    path = stdlib_dir(options) / "pydoc_data" / "topics.py"
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "topics" for t in node.targets
            ):
                value = ast.literal_eval(node.value)
                if isinstance(value, dict):
                    return {str(k): v for k, v in value.items() if isinstance(v, str)}
        reason = "no literal `topics` dict"
    except (OSError, SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        reason = str(exc)
    if same_minor(facts.version):
        return _own_topics()
    logger.info("no language topics for Python %s (%s): %s", facts.version, path, reason)
    return {}
