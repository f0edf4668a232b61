"""`NpmDocsSource`: the docs of a JavaScript/TypeScript project's installed packages.

Results: a package's API (`npm:eventemitter3@5.0.1#EventEmitter.once`, from its `.d.ts`),
a README section (`npm:eventemitter3@5.0.1#readme:contextual-emits`) or the package's
overview (`npm:eventemitter3@5.0.1`: its description and README introduction). Their URL is
the package's homepage, else its repository (a README section's with its heading anchor on
GitHub), else its npm page; their attribution the licence of its `package.json`.

An API a program calls (function, class, method, property) carries `api`/`api_kind`, as
the installed Python docs do: the pipeline cites it where the answer's code uses it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from codeweaver.sources.base import SourceError, SourceStatus
from codeweaver.sources.index_files import BuildGate
from codeweaver.sources.installed_docs.licence import attribution
from codeweaver.sources.languages import EXTENSIONS, named_language
from codeweaver.sources.npm_docs.discover import (
    compute_fingerprint,
    find_node_modules,
    folder_key,
    list_packages,
    npm_page,
)
from codeweaver.sources.npm_docs.index import IndexInfo, NpmIndex, open_index
from codeweaver.sources.npm_docs.model import (
    CALLED_KINDS,
    OVERVIEW,
    SECTION,
    NpmEntry,
    NpmOptions,
    PackageMeta,
    ProgressCallback,
)
from codeweaver.sources.npm_docs.tokens import package_tokens
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

SOURCE_NAME = "npm_docs"
SNIPPET_CHARS = 1200
# Python named, and no installed package: a Python question, which npm docs cannot answer.
_PYTHON = re.compile(
    r"(?<![\w.])(?:python3?|pip|pypi|django|flask|fastapi|pandas|numpy|pytest|파이썬)(?!\w)",
    re.IGNORECASE,
)
_CANDIDATE = re.compile(r"@?[a-z0-9][\w.~-]*(?:/[\w.~-]+)?")


# --------------------------------------------------------------------------- results


def entry_reference(entry: NpmEntry) -> str:
    base = f"npm:{entry.package}@{entry.version}"
    if entry.kind == OVERVIEW:
        return base
    if entry.kind == SECTION:
        return f"{base}#readme:{entry.anchor}"
    return f"{base}#{entry.name}"


def entry_url(entry: NpmEntry, meta: PackageMeta | None) -> str:
    base = meta.url if meta is not None else npm_page(entry.package, entry.version)
    if entry.kind == SECTION and entry.anchor and base.startswith("https://github.com/"):
        return f"{base.split('#')[0]}#{entry.anchor}"  # GitHub shows the README there
    return base


def entry_title(entry: NpmEntry) -> str:
    label = f"{entry.package} {entry.version}"
    if entry.kind == OVERVIEW:
        return f"{label} (npm package)"
    if entry.kind == SECTION:
        return f"{entry.name} — {label} README"
    return f"{entry.name} ({entry.kind}) — {label}"


def make_snippet(entry: NpmEntry, limit: int = SNIPPET_CHARS) -> str:
    """Signature, a blank line, then the doc; cut at a word boundary near `limit`."""
    text = f"{entry.signature}\n\n{entry.doc}".strip() if entry.signature else entry.doc
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip() + " …"


def to_result(entry: NpmEntry, score: float, meta: PackageMeta | None) -> SearchResult:
    result = SearchResult(
        title=entry_title(entry),
        url=entry_url(entry, meta),
        snippet=make_snippet(entry),
        source=SOURCE_NAME,
        score=score,
        date=None,
        reference=entry_reference(entry),
        attribution=attribution(meta.licence if meta is not None else ""),
    )
    if entry.kind in CALLED_KINDS:
        result["api"], result["api_kind"] = entry.name, entry.kind
    return result


def named_packages(query: str, index: NpmIndex) -> set[str]:
    """Installed packages the question names (`zod`, `@types/node`, `react-query`)."""
    names: dict[str, str] = {}
    for name in index.packages:
        for token in package_tokens(name)[:2]:  # the full name and the unscoped one
            names.setdefault(token, name)
    words = (w.rstrip(".") for w in _CANDIDATE.findall(query.lower()))
    return {names[w] for w in words if w in names}


def other_language(query: str, named: set[str]) -> bool:
    """Whether the question is about a language npm packages do not document: it names
    one (or Python) and no installed package."""
    if named:
        return False
    language = named_language(query)
    if language is not None:
        return ".js" not in EXTENSIONS.get(language.lower(), frozenset())
    return bool(_PYTHON.search(query))


# --------------------------------------------------------------------------- the source


class NpmDocsSource:
    """Docs of the packages in the project's `node_modules`, BM25-indexed under
    `index_root/<node_modules key>/` and rebuilt when a package is added, removed or
    changes version."""

    name = SOURCE_NAME
    offline = True  # the same query always finds the same: see `Source.offline`

    def __init__(
        self,
        index_root: Path,
        folders: tuple[Path, ...],
        *,
        options: NpmOptions | None = None,
        progress: ProgressCallback | None = None,
        recheck_interval: float = 60.0,
        retry_after: float = 300.0,
    ) -> None:
        """`folders`: where `node_modules` is looked for, nearest first (the working
        folder up to the project root, `discover.search_folders`). `recheck_interval`:
        seconds a loaded index is trusted without re-reading the packages' versions.
        `retry_after`: after a failed build, searches fail fast for this long."""
        self.index_root = Path(index_root)
        self.folders = folders
        self.options = options or NpmOptions()
        self._progress = progress
        self._recheck_interval = recheck_interval
        self._retry_after = retry_after
        self._gate = BuildGate("npm_docs")
        self._loaded: NpmIndex | None = None
        self._checked_at = 0.0
        self._failure: tuple[float, str] | None = None

    def node_modules(self) -> Path | None:
        return find_node_modules(self.folders)

    def status(self) -> SourceStatus:
        if self.node_modules() is None:
            where = str(self.folders[0]) if self.folders else "the project"
            if len(self.folders) > 1:
                where += f" or its parents up to the project root {self.folders[-1]}"
            return SourceStatus("skipped", f"no node_modules folder in {where}")
        return SourceStatus("ready")

    def ensure_index(self, progress: ProgressCallback | None = None) -> IndexInfo:
        """Load the cached index, building it when missing or stale (thread-safe)."""
        return self._ensure(progress, retry=True).info

    def prepare(self, progress: ProgressCallback | None = None) -> None:
        """Build or load the index up front, so the first search is fast (`Preparable`)."""
        self.ensure_index(progress)

    def installed_versions(self) -> Mapping[str, str]:
        """Package name (`eventemitter3`, `@types/node`) -> its installed version, from the
        loaded index ({} before: this never reads `node_modules`)."""
        loaded = self._loaded
        if loaded is None:
            return {}
        return {name: meta.version for name, meta in loaded.packages.items()}

    def building(self) -> str | None:
        """How far a build of the index is, or None (`ReportsBuilding`)."""
        return self._gate.building()

    def _ensure(
        self, progress: ProgressCallback | None, *, retry: bool, wait: bool = True
    ) -> NpmIndex:
        with self._gate.hold(wait=wait):
            loaded, now = self._loaded, time.monotonic()
            if loaded is not None and now - self._checked_at < self._recheck_interval:
                return loaded
            if not retry and self._failure and now - self._failure[0] < self._retry_after:
                raise SourceError(self._failure[1])
            node_modules = self.node_modules()
            if node_modules is None:
                raise SourceError(f"npm_docs: {self.status().reason}")
            index_dir = self.index_root / folder_key(node_modules)
            try:
                packages = list_packages(node_modules, self.options)
                fingerprint = compute_fingerprint(packages, self.options)
                if loaded is None or loaded.info.fingerprint != fingerprint:
                    loaded = open_index(
                        index_dir, packages, node_modules, self.options, fingerprint,
                        self._gate.tracked(progress or self._progress),
                    )  # fmt: skip
            except Exception as exc:  # any failure: the run goes on without this source
                logger.warning("npm_docs index unavailable", exc_info=True)
                message = f"npm_docs: cannot build or load the index in {index_dir}: {exc}"
                self._failure = (time.monotonic(), message)
                raise SourceError(message) from exc
            self._loaded, self._checked_at, self._failure = loaded, time.monotonic(), None
            return loaded

    def search_sync(self, query: str, limit: int, *, bar: bool = True) -> list[SearchResult]:
        """Up to `limit` results, best first; `bar=False`: whatever their scores (`ranked`)."""
        if not query.strip() or limit <= 0:
            return []
        index = self._ensure(None, retry=False, wait=False)
        if other_language(query, named_packages(query, index)):
            return []
        return [
            to_result(entry, round(score, 4), index.packages.get(entry.package))
            for entry, score in index.query(query, limit, bar=bar)
        ]

    async def ranked(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results by score without the precision-first bars `search`
        applies: for a caller that judges relevance itself (an agent over MCP)."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit, bar=False)

    def describe_index(self) -> tuple[datetime, str] | None:
        """When the loaded index was built and what it holds (None before it is loaded)."""
        loaded = self._loaded
        if loaded is None:
            return None
        info = loaded.info
        count = len(loaded.packages)
        line = (
            f"the project's node_modules, {count:,} package{'' if count == 1 else 's'}, "
            f"{info.entry_count:,} entries"
        )
        return info.built_at, line

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results, best first; `SourceError` if the index is unavailable."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit)
