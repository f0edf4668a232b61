"""Offline source: docs of the installed Python (stdlib, installed distributions, topics).

`InstalledDocsSource` indexes docstrings and signatures (parsed with `ast`, never importing
third-party code), `pydoc_data.topics` and the built-in/C modules with BM25 (`bm25s`) and
dense vectors (all-MiniLM-L6-v2), caches both under `settings.docs_index_dir` and rebuilds
them when the Python version or the set of installed distributions (or their versions)
changes. Searches fuse BM25, vectors and exact API names (`ranking`).
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
from codeweaver.sources.installed_docs.ranking import RankingOptions
from codeweaver.sources.installed_docs.source import InstalledDocsSource
from codeweaver.sources.installed_docs.vectors import EMBEDDER

if TYPE_CHECKING:
    from codeweaver.config import Settings

__all__ = [
    "CollectorOptions",
    "DocEntry",
    "IndexInfo",
    "IndexLoadError",
    "InstalledDocsSource",
    "ProgressCallback",
    "RankingOptions",
    "build_index",
    "collect_entries",
    "compute_fingerprint",
    "normalise_score",
]


@register_source("installed_docs")
def _factory(settings: Settings) -> InstalledDocsSource:
    from codeweaver.embeddings import create_embedder

    # Always MiniLM: the ranking's scores are calibrated on its vectors.
    return InstalledDocsSource(
        settings.docs_index_dir, embedder=lambda: create_embedder(EMBEDDER, settings)
    )
