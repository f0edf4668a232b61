"""`PythonDocsSource`: Python's own prose docs (tutorial, how-tos, FAQ, reference) offline.

The docs are those of the project's Python (`installed_docs.project`: its environment's
version, else CodeWeaver's own), when the machine has them at the same major.minor
(`sections.find_docs`). A result cites one section:
`python-docs:tutorial/inputoutput.html#methods-of-file-objects@3.11.2`, linked to the same
section on docs.python.org for that version, under the PSF licence.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from codeweaver.sources.base import SourceError, SourceStatus
from codeweaver.sources.index_files import BuildGate
from codeweaver.sources.installed_docs.exact import other_language
from codeweaver.sources.installed_docs.licence import PYTHON_LICENCE, attribution
from codeweaver.sources.python_docs.index import (
    IndexInfo,
    ProgressCallback,
    PythonDocsIndex,
    open_index,
)
from codeweaver.sources.python_docs.sections import DocSection, find_docs
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

SOURCE_NAME = "python_docs"
SNIPPET_CHARS = 4000
INSTALL_HINT = "Debian/Ubuntu: `sudo apt install python{minor}-doc`; or set CODEWEAVER_PYTHON_DOCS"


def section_url(section: DocSection, version: str) -> str:
    minor = ".".join(version.split(".")[:2])
    return f"https://docs.python.org/{minor}/{section.page}#{section.anchor}"


def to_result(section: DocSection, score: float, version: str) -> SearchResult:
    where = f"{section.trail} › {section.title}" if section.trail else section.title
    text = section.text
    if len(text) > SNIPPET_CHARS:
        cut = text.rfind("\n", SNIPPET_CHARS // 2, SNIPPET_CHARS)
        text = text[: cut if cut > 0 else SNIPPET_CHARS].rstrip() + " …"
    return SearchResult(
        title=f"{where} — Python {version} documentation",
        url=section_url(section, version),
        snippet=text,
        source=SOURCE_NAME,
        score=score,
        date=None,
        reference=f"python-docs:{section.page}#{section.anchor}@{version}",
        attribution=attribution(PYTHON_LICENCE),
    )


class PythonDocsSource:
    """Searches the section index of the Python docs found for `python_version`."""

    name = SOURCE_NAME
    offline = True  # the same query always finds the same: see `Source.offline`

    def __init__(
        self,
        index_dir: Path,
        python_version: Callable[[], str],
        *,
        explicit_dir: Path | None = None,
        cache_dir: Path | None = None,
        progress: ProgressCallback | None = None,
        retry_after: float = 300.0,
    ) -> None:
        """`python_version`: the version whose docs are wanted (asked once, lazily: finding
        the project's interpreter runs it). `explicit_dir`: the docs folder a setting names;
        `cache_dir`: the cache folder `codeweaver setup` fetches the docs into."""
        self.index_dir = Path(index_dir)
        self._python_version = python_version
        self._explicit = explicit_dir
        self._cache_dir = cache_dir
        self._progress = progress
        self._retry_after = retry_after
        self._gate = BuildGate(SOURCE_NAME)
        self._found: tuple[str, Path | None, str] | None = None
        self._loaded: PythonDocsIndex | None = None
        self._failure: tuple[float, str] | None = None

    def _docs(self) -> tuple[str, Path | None, str]:
        """(wanted Python version, docs folder or None, the docs' version)."""
        if self._found is None:
            wanted = self._python_version()
            self._found = (wanted, *find_docs(wanted, self._explicit, self._cache_dir))
        return self._found

    def status(self) -> SourceStatus:
        wanted, folder, _version = self._docs()
        if folder is not None:
            return SourceStatus("ready")
        minor = ".".join(wanted.split(".")[:2])
        if self._explicit is not None:
            reason = f"no Python {minor} HTML docs in {self._explicit} (CODEWEAVER_PYTHON_DOCS)"
        else:
            reason = f"Python {minor}'s docs are not installed ({INSTALL_HINT.format(minor=minor)})"
        return SourceStatus("skipped", reason)

    def ensure_index(self, progress: ProgressCallback | None = None) -> IndexInfo:
        """Load the cached index, building it when missing or stale (thread-safe)."""
        return self._ensure(progress, retry=True).info

    def prepare(self, progress: ProgressCallback | None = None) -> None:
        """Build or load the index up front, so the first search is fast (`Preparable`)."""
        if self.status().usable:
            self.ensure_index(progress)

    def building(self) -> str | None:
        """How far a build of the index is, or None (`ReportsBuilding`)."""
        return self._gate.building()

    def _ensure(
        self, progress: ProgressCallback | None, *, retry: bool, wait: bool = True
    ) -> PythonDocsIndex:
        with self._gate.hold(wait=wait):
            if self._loaded is not None:
                return self._loaded
            now = time.monotonic()
            if not retry and self._failure and now - self._failure[0] < self._retry_after:
                raise SourceError(self._failure[1])
            _wanted, folder, version = self._docs()
            if folder is None:
                raise SourceError(f"{SOURCE_NAME}: {self.status().reason}")
            try:
                tracked = self._gate.tracked(progress or self._progress)
                loaded = open_index(self.index_dir, folder, version, tracked)
            except Exception as exc:  # any failure: the run goes on without this source
                logger.warning("python_docs index unavailable", exc_info=True)
                message = (
                    f"{SOURCE_NAME}: cannot build or load the index in {self.index_dir}: {exc}"
                )
                self._failure = (time.monotonic(), message)
                raise SourceError(message) from exc
            self._loaded, self._failure = loaded, None
            return loaded

    def search_sync(self, query: str, limit: int, *, bar: bool = True) -> list[SearchResult]:
        """Up to `limit` results, best first; `bar=False`: whatever their scores (`ranked`)."""
        if not query.strip() or limit <= 0:
            return []
        index = self._ensure(None, retry=False, wait=False)
        if other_language(query, frozenset()) is not None:
            return []  # a question about another language: Python's docs do not answer it
        version = index.info.docs_version
        return [
            to_result(section, round(score, 4), version)
            for section, score in index.query(query, limit, bar=bar)
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
        return info.built_at, f"Python {info.docs_version}'s docs, {info.section_count:,} sections"

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results, best first; `SourceError` if the index is unavailable."""
        if not query.strip() or limit <= 0:
            return []
        return await asyncio.to_thread(self.search_sync, query, limit)
