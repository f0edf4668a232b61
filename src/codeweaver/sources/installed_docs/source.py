"""`InstalledDocsSource`: hybrid search over the docs of the installed Python, offline.

Ranking (`ranking`): BM25, dense vectors (all-MiniLM-L6-v2, built once per index and stored
beside it, see `vectors`) and exact API names of the question, fused by reciprocal rank,
with a prior for the packages the question names.

A result's `score` is in [0, 1]: the estimated chance that the entry documents an API a
correct answer uses, calibrated on CoNaLa questions (0.5 = about one such entry in two).
Only results scoring at least `ranking.SCORE_THRESHOLD` are returned, so a question the
installed docs cannot answer gets no result rather than a misleading one.

Vectors missing for the current index are embedded by `prepare`/`ensure_index` (with
progress); a search that finds them missing starts that work in a background thread and
ranks without vectors until it is done.

The docs indexed are those of one Python environment (`environment`, found by `project`):
the user's project's, or CodeWeaver's own; each keeps its indexes in its own folder.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from codeweaver.embeddings.base import Embedder
from codeweaver.sources.base import SourceError, SourceStatus
from codeweaver.sources.installed_docs import indexer
from codeweaver.sources.installed_docs.collect import CollectorOptions, DocEntry, ProgressCallback
from codeweaver.sources.installed_docs.dense import DenseVectors
from codeweaver.sources.installed_docs.exact import other_language
from codeweaver.sources.installed_docs.indexer import IndexInfo, LoadedIndex
from codeweaver.sources.installed_docs.licence import Licences, attribution
from codeweaver.sources.installed_docs.project import (
    Environment,
    env_index_dir,
    record_environment,
)
from codeweaver.sources.installed_docs.ranking import HybridRanker, RankingOptions
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

SOURCE_NAME = "installed_docs"
SNIPPET_CHARS = 1200


# --------------------------------------------------------------------------- URLs


def _docs_base(version: str = "") -> str:
    """docs.python.org for `version` (`3.12.1`: the indexed Python's), else ours."""
    parts = version.split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return f"https://docs.python.org/{parts[0]}.{parts[1]}"
    return f"https://docs.python.org/{sys.version_info.major}.{sys.version_info.minor}"


#: Stdlib packages documented on one page (submodules without a page of their own).
_SINGLE_PAGE = frozenset(
    {"json", "asyncio", "sqlite3", "ctypes", "tomllib", "zoneinfo", "wsgiref", "multiprocessing",
     "concurrent", "email", "http", "importlib", "unittest", "xml", "urllib", "logging", "os",
     "collections", "dbm", "curses", "encodings", "html", "venv", "zipfile"}
)  # fmt: skip
#: Submodules that do have their own page.
_SUBPAGES = frozenset(
    {"os.path", "collections.abc", "concurrent.futures", "email.mime", "email.message",
     "email.parser", "email.policy", "email.utils", "email.headerregistry", "http.client",
     "http.server", "http.cookies", "http.cookiejar", "importlib.metadata",
     "importlib.resources", "unittest.mock", "xml.etree.ElementTree", "xml.dom",
     "xml.dom.minidom", "xml.sax", "urllib.request", "urllib.parse", "urllib.error",
     "urllib.robotparser", "logging.handlers", "logging.config", "multiprocessing.shared_memory",
     "html.parser", "html.entities", "curses.ascii", "curses.panel", "json.tool"}
)  # fmt: skip


def _stdlib_page(module: str) -> str:
    if module in _SUBPAGES:
        return module.lower()
    top = module.split(".")[0]
    return top if top in _SINGLE_PAGE or "." in module else module.lower()


def stdlib_url(module: str, name: str, kind: str, version: str = "") -> str:
    """Best-effort docs.python.org anchor (`library/json.html#json.loads`) of `version`."""
    base = _docs_base(version)
    if module == "builtins":
        rest = name.removeprefix("builtins.")
        if "." in rest:
            return f"{base}/library/stdtypes.html#{rest}"
        obj = getattr(builtins, rest, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return f"{base}/library/exceptions.html#{rest}"
        return f"{base}/library/functions.html#{rest}"
    anchor = f"module-{module}" if kind == "module" else name
    return f"{base}/library/{_stdlib_page(module)}.html#{anchor}"


_TOPIC_PAGES: dict[str, tuple[str, ...]] = {
    "reference/simple_stmts": ("assert", "assignment", "augassign", "break", "continue", "del",
                               "global", "import", "nonlocal", "pass", "raise", "return",
                               "yield"),
    "reference/compound_stmts": ("async", "class", "compound", "else", "for", "function", "if",
                                 "try", "while", "with"),
    "reference/expressions": ("atom-identifiers", "atom-literals", "attribute-references",
                              "await", "binary", "bitwise", "booleans", "calls", "comparisons",
                              "conversions", "dict", "exprlists", "in", "lambda", "lists",
                              "operator-summary", "power", "shifting", "slicings",
                              "subscriptions", "unary"),
    "reference/lexical_analysis": ("floating", "id-classes", "identifiers", "imaginary",
                                   "integers", "numbers", "strings"),
    "reference/datamodel": ("attribute-access", "callable-types", "context-managers",
                            "customization", "numeric-types", "objects", "sequence-types",
                            "specialnames", "types"),
    "reference/executionmodel": ("dynamic-features", "exceptions", "execmodel", "naming"),
    "library/stdtypes": ("bltin-code-objects", "bltin-ellipsis-object", "bltin-null-object",
                         "bltin-type-objects", "specialattrs", "string-methods", "truth",
                         "typesfunctions", "typesmapping", "typesmethods", "typesmodules",
                         "typesseq", "typesseq-mutable"),
    "library/string": ("formatstrings",),
    "library/pdb": ("debugger",),
}  # fmt: skip
_TOPIC_URL = {label: page for page, labels in _TOPIC_PAGES.items() for label in labels}


def topic_url(label: str, version: str = "") -> str:
    """docs.python.org page of a `pydoc_data.topics` label (the docs' search page if unknown)."""
    page = _TOPIC_URL.get(label)
    if page is None:
        return f"{_docs_base(version)}/search.html?q={label}"
    return f"{_docs_base(version)}/{page}.html#{label}"


# --------------------------------------------------------------------------- results


def entry_url(entry: DocEntry) -> str:
    if entry.kind == "topic":
        return topic_url(entry.name, entry.version)
    if entry.package == "python":
        return stdlib_url(entry.module, entry.name, entry.kind, entry.version)
    if entry.home:
        return entry.home
    return Path(entry.path).as_uri() if entry.path else ""


def entry_reference(entry: DocEntry) -> str:
    name = f"topic:{entry.name}" if entry.kind == "topic" else entry.name
    return f"{entry.package}:{name}@{entry.version}"


def entry_title(entry: DocEntry) -> str:
    if entry.kind == "topic":
        return f"{entry.name} (language reference topic) — {entry.display} {entry.version}"
    return f"{entry.name} — {entry.display} {entry.version}"


def make_snippet(entry: DocEntry, limit: int = SNIPPET_CHARS) -> str:
    """Signature, a blank line, then the docstring; cut at a word boundary near `limit`."""
    text = f"{entry.signature}\n\n{entry.doc}".strip() if entry.signature else entry.doc
    text = re.sub(r"\n{3,}", "\n\n", text)
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip() + " …"


def to_result(entry: DocEntry, score: float, licence: str = "") -> SearchResult:
    """`licence`: the entry's package licence, "" when unknown (never None: it would be
    shown as the word "None")."""
    result = SearchResult(
        title=entry_title(entry),
        url=entry_url(entry),
        snippet=make_snippet(entry),
        source=SOURCE_NAME,
        score=score,
        date=None,
        reference=entry_reference(entry),
        attribution=attribution(licence),
    )
    if entry.kind != "topic":
        result["api"], result["api_kind"] = entry.name, entry.kind
    return result


def distribution_versions(entries: list[DocEntry]) -> dict[str, str]:
    """Name -> version of the distributions (not the stdlib) `entries` document; a module
    two distributions share (a namespace such as `google`) names neither."""
    versions: dict[str, str] = {}
    modules: dict[str, str] = {}
    shared: set[str] = set()
    for entry in entries:
        if entry.package == "python":
            continue
        versions[entry.package] = versions[entry.display] = entry.version
        top = entry.module.split(".")[0]
        private = not top or top.startswith("_")
        if not private and modules.setdefault(top, entry.package) != entry.package:
            shared.add(top)
    for top, package in modules.items():
        if top not in shared:
            versions.setdefault(top, versions[package])
    return versions


class InstalledDocsSource:
    """Docs of the stdlib and installed distributions, BM25-indexed and cached in `index_dir`
    (a project environment's in a sub-folder of it, `project.env_index_dir`).

    The index is built lazily by the first search (or `ensure_index`), reused while the Python
    version and the installed distributions stay the same, and rebuilt when they change.
    """

    name = SOURCE_NAME

    def __init__(
        self,
        index_dir: Path,
        *,
        progress: ProgressCallback | None = None,
        options: CollectorOptions | None = None,
        recheck_interval: float = 60.0,
        retry_after: float = 300.0,
        embedder: Callable[[], Embedder] | None = None,
        ranking: RankingOptions | None = None,
        environment: Environment | None = None,
        parsed_dir: Path | None = None,
    ) -> None:
        """`recheck_interval`: seconds during which a loaded index is trusted without
        re-reading the installed distributions (0 = check on every search).
        `retry_after`: after a failed build, searches fail fast for this many seconds instead
        of rebuilding on every call (`ensure_index` always retries).
        `embedder`: makes the embedder of the dense vectors (default: `minilm` from the
        embedder registry). `ranking`: which parts of the ranking run (all by default).
        `environment`: whose docs these are (None: CodeWeaver's own; it only places the index,
        `options` say what is read). `parsed_dir`: the parse cache of distributions that
        rebuilds reuse (None: none)."""
        self.index_dir = Path(index_dir)
        self.environment = environment
        self.env_dir = env_index_dir(self.index_dir, environment)
        self._parsed_dir = parsed_dir
        self.ranking = ranking or RankingOptions()
        self._dense = DenseVectors(embedder, enabled=self.ranking.dense, retry_after=retry_after)
        self._ranker: HybridRanker | None = None
        self._rank_lock = threading.Lock()
        self.options = options or CollectorOptions()
        self._licences = Licences(self.options.paths)
        self._progress = progress
        self._recheck_interval = recheck_interval
        self._lock = threading.Lock()
        self._retry_after = retry_after
        self._loaded: LoadedIndex | None = None
        self._checked_at = 0.0
        self._failure: tuple[float, str] | None = None  # (monotonic time, message)
        self._versions: tuple[LoadedIndex, dict[str, str]] | None = None

    def status(self) -> SourceStatus:
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return SourceStatus("skipped", f"cannot create index folder {self.index_dir}: {exc}")
        if not os.access(self.index_dir, os.W_OK | os.X_OK):
            return SourceStatus("skipped", f"index folder {self.index_dir} is not writable")
        return SourceStatus("ready")

    def ensure_index(self, progress: ProgressCallback | None = None) -> IndexInfo:
        """Load the cached index and its vectors, building what is missing, stale or
        corrupted (thread-safe). Vectors that cannot be made leave the search without them."""
        loaded = self._ensure(progress, retry=True)
        self._ranker_for(loaded, progress, wait=True)
        return loaded.info

    def prepare(self, progress: ProgressCallback | None = None) -> None:
        """Build or load the index and its vectors up front, so the first search is fast
        (`Preparable`); `SourceError` names vectors that could not be made (the source still
        searches without them)."""
        self.ensure_index(progress)
        if self._dense.problem:
            problem = self._dense.problem
            raise SourceError(f"installed_docs: searching without dense vectors: {problem}")

    def catalogue(self) -> dict[str, str]:
        """Documented function, method, class and property names -> their package."""
        loaded = self._ensure(None, retry=True)
        kinds = {"function", "method", "class", "property"}
        return {e.name: e.package for e in loaded.entries if e.kind in kinds}

    def installed_versions(self) -> Mapping[str, str]:
        """Each indexed distribution's version under its name, its published name and its
        top-level modules (`scikit-learn`, `sklearn`), from the loaded index ({} before)."""
        loaded = self._loaded
        if loaded is None:
            return {}
        cached = self._versions
        if cached is not None and cached[0] is loaded:
            return cached[1]
        versions = distribution_versions(loaded.entries)
        self._versions = (loaded, versions)
        return versions

    def _ranker_for(
        self, loaded: LoadedIndex, progress: ProgressCallback | None, *, wait: bool
    ) -> HybridRanker:
        with self._rank_lock:
            ranker = self._ranker
            if ranker is None or ranker.index is not loaded:
                ranker = HybridRanker(loaded, None, self._dense.embed_query, self.ranking)
                self._ranker = ranker
        if ranker.vectors is not None:
            return ranker
        vectors = self._dense.vectors_for(loaded, progress or self._progress, wait=wait)
        if vectors is None:
            return ranker
        with self._rank_lock:
            if self._ranker is ranker:
                self._ranker = ranker.with_vectors(vectors)
            return self._ranker or ranker

    def _ensure(self, progress: ProgressCallback | None, *, retry: bool) -> LoadedIndex:
        with self._lock:
            loaded = self._loaded
            now = time.monotonic()
            if loaded is not None and now - self._checked_at < self._recheck_interval:
                return loaded
            if not retry and self._failure and now - self._failure[0] < self._retry_after:
                raise SourceError(self._failure[1])
            try:
                fingerprint = indexer.compute_fingerprint(self.options)
                if loaded is None or loaded.info.fingerprint != fingerprint:
                    if self.environment is not None and self.env_dir != self.index_dir:
                        record_environment(self.env_dir, self.environment)
                    loaded = indexer.open_index(
                        self.env_dir,
                        self.options,
                        progress or self._progress,
                        fingerprint,
                        parsed_dir=self._parsed_dir,
                    )
            except Exception as exc:  # any failure: the run goes on without this source
                logger.warning("installed_docs index unavailable", exc_info=True)
                message = f"installed_docs: cannot build or load the index in {self.env_dir}: {exc}"
                self._failure = (time.monotonic(), message)
                raise SourceError(message) from exc
            self._loaded, self._checked_at, self._failure = loaded, time.monotonic(), None
            return loaded

    def search_sync(self, query: str, limit: int) -> list[SearchResult]:
        if not query.strip() or limit <= 0:
            return []
        ranker = self._ranker_for(self._ensure(None, retry=False), None, wait=False)
        if other_language(query, ranker.top_set) is not None:
            return []
        licence = self._licences.of
        return [
            to_result(c.entry, round(c.score, 4), licence(c.entry.package, c.entry.version))
            for c in ranker.search(query, limit)
        ]

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results, best first; `SourceError` if the index is unavailable."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit)
