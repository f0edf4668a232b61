"""`InstalledDocsSource`: hybrid search over the docs of the installed Python, offline.

Ranking (`ranking`): BM25, dense vectors (all-MiniLM-L6-v2, built once per index and stored
beside it, see `vectors`) and exact API names of the question, fused by reciprocal rank,
with a prior for the packages the question names.

A result's `score` is in [0, 1]: the entry's relevance to the question, fitted on CoNaLa
questions (`ranking.Candidate.score`). `search` (the answer pipeline's) returns only the
results that pass the bar (`ranking.passes`: the ranking's estimate that an answer uses the
entry, with a relevance above nothing), so a question the installed docs cannot answer
gets no result rather than a misleading one; `ranked` returns the ranked list without that
bar, for a caller that judges relevance itself (the MCP `search_docs` tool).

The BM25 index is built or loaded by `prepare` (seconds; the first build after an install,
which parses only the distributions that changed, up to a minute). Vectors missing for it
are embedded in a background thread (`prepare`, or a search that finds them missing) while
searches rank without them, or in the caller's thread by `ensure_index`. A search that meets
an index being built does not wait for it: the run goes on without this source, whose
`building()` line says how far it is.

The docs indexed are those of one Python environment (`environment`, found by `project`):
the user's project's, or CodeWeaver's own; each keeps its indexes in its own folder.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from codeweaver.embeddings.base import Embedder
from codeweaver.sources.base import SourceError, SourceStatus
from codeweaver.sources.index_files import BuildGate
from codeweaver.sources.installed_docs import indexer
from codeweaver.sources.installed_docs.collect import CollectorOptions, DocEntry, ProgressCallback
from codeweaver.sources.installed_docs.dense import DenseVectors, alive
from codeweaver.sources.installed_docs.exact import other_language
from codeweaver.sources.installed_docs.indexer import IndexInfo, LoadedIndex
from codeweaver.sources.installed_docs.licence import Licences
from codeweaver.sources.installed_docs.project import (
    Environment,
    env_index_dir,
    record_environment,
)
from codeweaver.sources.installed_docs.ranking import HybridRanker, RankingOptions
from codeweaver.sources.installed_docs.results import (
    SOURCE_NAME,
    to_result,
)
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)


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


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


class InstalledDocsSource:
    """Docs of the stdlib and installed distributions, BM25-indexed and cached in `index_dir`
    (a project environment's in a sub-folder of it, `project.env_index_dir`).

    The index is built lazily by the first search (or `ensure_index`), reused while the Python
    version and the installed distributions stay the same, and rebuilt when they change.
    """

    name = SOURCE_NAME
    offline = True  # the same query always finds the same: see `Source.offline`

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
        self._ranker_early = False  # its vectors are a build's first part (`early_vectors`)
        self._rank_lock = threading.Lock()
        self.options = options or CollectorOptions()
        self._licences = Licences(self.options.paths)
        self._progress = progress
        self._recheck_interval = recheck_interval
        self._retry_after = retry_after
        self._loaded: LoadedIndex | None = None
        self._checked_at = 0.0
        self._failure: tuple[float, str] | None = None  # (monotonic time, message)
        self._gate = BuildGate(SOURCE_NAME)
        self._versions: tuple[LoadedIndex, dict[str, str]] | None = None
        self._by_name: tuple[LoadedIndex, dict[str, DocEntry]] | None = None
        self._distributions: tuple[LoadedIndex, int] | None = None

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
        """Build or load the BM25 index up front, so the first search is fast, and start
        embedding what lacks a vector in the background (`Preparable`); `SourceError` names
        vectors that cannot be made (the source still searches without them)."""
        loaded = self._ensure(progress, retry=True)
        self._ranker_for(loaded, None, wait=False)
        if self._dense.problem:
            problem = self._dense.problem
            raise SourceError(f"installed_docs: searching without dense vectors: {problem}")

    def building(self) -> str | None:
        """What is still being made, in a line (None when the index and its vectors are
        ready): the index itself, or the vectors with how many are left and an estimate."""
        if (line := self._gate.building()) is not None:
            return line
        loaded = self._loaded
        if loaded is None:
            return None
        state = self._dense.state(loaded)
        if state.state in {"ready", "off", "failed"}:
            return None
        found = state.progress
        if found is None:
            return "embedding the docs entries: starting"
        eta = found.eta_seconds()
        left = f", about {_duration(eta)} left" if eta is not None else ""
        counted = f"{found.done:,}/{found.total:,}"
        return f"embedding the docs entries: {counted}{left} (search works meanwhile)"

    def freshness(self) -> str:
        """For `doctor`, without building anything: whether the index fits the installation
        and how many entries still lack a vector."""
        from codeweaver.sources.installed_docs.vectors import (
            known_vectors,
            load_vectors,
            missing_texts,
            read_progress,
        )

        fingerprint = indexer.compute_fingerprint(self.options)
        folder = indexer.index_path(self.env_dir, fingerprint)
        try:
            loaded = indexer.load_index(folder, fingerprint)
        except indexer.IndexLoadError:
            return (
                "stale: the index is for another installation; the next run rebuilds it "
                "(up to a minute), then embeds what is new in the background"
            )
        count = loaded.info.entry_count
        embedder = self._dense.embedder()
        if not self.ranking.dense or embedder is None:
            return f"ready: {count:,} entries (no vectors: {self._dense.problem or 'off'})"
        if load_vectors(folder, fingerprint, embedder.name, count, embedder.dimension) is not None:
            return f"ready: {count:,} entries, all with vectors"
        found = read_progress(folder)
        if found is not None and alive(found.pid):
            eta = found.eta_seconds()
            left = f", about {_duration(eta)} left" if eta is not None else ""
            return f"building vectors: {found.done:,}/{found.total:,}{left} (process {found.pid})"
        missing = missing_texts(loaded.entries, known_vectors(folder, embedder))
        return (
            f"stale: {missing:,} of {count:,} entries to embed (the next run does it in the "
            "background; `codeweaver setup --wait` does it now)"
        )

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
        if ranker.vectors is not None and not self._ranker_early:
            return ranker
        vectors = self._dense.vectors_for(loaded, progress or self._progress, wait=wait)
        early = vectors is None  # meanwhile, the most called entries' vectors once made
        if early:
            vectors = self._dense.early_vectors(loaded)
        if vectors is None or vectors is ranker.vectors:
            return ranker
        with self._rank_lock:
            if self._ranker is ranker:
                self._ranker = ranker.with_vectors(vectors)
                self._ranker_early = early
            return self._ranker or ranker

    def _ensure(
        self, progress: ProgressCallback | None, *, retry: bool, wait: bool = True
    ) -> LoadedIndex:
        """The loaded index, built or reloaded when the installation changed. `wait=False`
        (a search): `SourceError` at once when another thread is building it."""
        with self._gate.hold(wait=wait):
            return self._ensure_locked(progress, retry=retry)

    def _ensure_locked(self, progress: ProgressCallback | None, *, retry: bool) -> LoadedIndex:
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
                    self._gate.tracked(progress or self._progress),
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

    def search_sync(self, query: str, limit: int, *, bar: bool = True) -> list[SearchResult]:
        """Up to `limit` results, best first; `bar=False`: whatever their scores (`ranked`)."""
        if not query.strip() or limit <= 0:
            return []
        ranker = self._ranker_for(self._ensure(None, retry=False, wait=False), None, wait=False)
        if other_language(query, ranker.top_set) is not None:
            return []
        licence = self._licences.of
        return [
            to_result(c.entry, round(c.score, 4), licence(c.entry.package, c.entry.version))
            for c in ranker.search(query, limit, bar=bar)
        ]

    async def ranked(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results in the ranking's order with their scores, without the
        relevance bar `search` applies: for a caller that judges relevance itself (an agent
        over MCP). The bar is fitted for the answer pipeline, which must not quote a page
        that merely resembles the question; an agent loses more by seeing nothing."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit, bar=False)

    def describe_index(self) -> tuple[datetime, str] | None:
        """When the loaded index was built and what it holds, in words (None before it is
        loaded: never builds it). The environment is named, never its path: an HTTP
        client is told whose docs these are, not where the server keeps them."""
        loaded = self._loaded
        if loaded is None:
            return None
        env = self.environment
        if env is None or env.own:
            whose, python = "CodeWeaver's own environment", env.version if env else ""
        else:
            whose, python = f"the project's environment ({env.found_by})", env.version
        counted = self._distributions
        if counted is None or counted[0] is not loaded:
            packages = {e.package for e in loaded.entries if e.package != "python"}
            counted = self._distributions = (loaded, len(packages))
        plural = "" if counted[1] == 1 else "s"
        line = (
            f"{whose}, Python {python or platform.python_version()}, "
            f"{counted[1]:,} distribution{plural}, {loaded.info.entry_count:,} entries"
        )
        if (building := self.building()) is not None:
            line += f"; {building}"
        return loaded.info.built_at, line

    def api_pages(self, names: Sequence[str]) -> list[SearchResult]:
        """The pages of those of `names` (qualified: `pandas.concat`) the loaded index
        documents, in their order ([] before it is loaded: never builds it)."""
        loaded = self._loaded
        if loaded is None or not names:
            return []
        cached = self._by_name
        if cached is None or cached[0] is not loaded:
            by_name = {e.name: e for e in loaded.entries if e.kind != "topic"}
            cached = self._by_name = (loaded, by_name)
        licence = self._licences.of
        found = [cached[1][name] for name in dict.fromkeys(names) if name in cached[1]]
        return [to_result(e, 1.0, licence(e.package, e.version)) for e in found]

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results, best first; `SourceError` if the index is unavailable."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit)
