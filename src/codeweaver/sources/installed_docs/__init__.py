"""Offline source: docs of the installed Python (stdlib, installed distributions, topics).

`InstalledDocsSource` indexes docstrings and signatures (parsed with `ast`, never importing
third-party code), `pydoc_data.topics` and the built-in/C modules with BM25 (`bm25s`), caches
the index under `settings.docs_index_dir` and rebuilds it when the Python version or the set
of installed distributions (or their versions) changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeweaver.sources.base import register_source
from codeweaver.sources.installed_docs.collect import (
    CollectorOptions,
    DocEntry,
    ProgressCallback,
    collect_entries,
)
from codeweaver.sources.installed_docs.indexer import (
    IndexInfo,
    IndexLoadError,
    build_index,
    compute_fingerprint,
    normalise_score,
)
from codeweaver.sources.installed_docs.source import InstalledDocsSource

if TYPE_CHECKING:
    from codeweaver.config import Settings

__all__ = [
    "CollectorOptions",
    "DocEntry",
    "IndexInfo",
    "IndexLoadError",
    "InstalledDocsSource",
    "ProgressCallback",
    "build_index",
    "collect_entries",
    "compute_fingerprint",
    "normalise_score",
]


@register_source("installed_docs")
def _factory(settings: Settings) -> InstalledDocsSource:
    return InstalledDocsSource(settings.docs_index_dir)
