"""Offline source: docs of the installed Python (stdlib, installed distributions, topics).

`InstalledDocsSource` indexes docstrings and signatures (parsed with `ast`, never importing
third-party code), `pydoc_data.topics` and the built-in/C modules with BM25 (`bm25s`) and
dense vectors (all-MiniLM-L6-v2), caches both under `settings.docs_index_dir` and rebuilds
them when the Python version or the set of installed distributions (or their versions)
changes. Searches fuse BM25, vectors and exact API names (`ranking`).

The Python indexed is the user's project's environment when one is found (`project`:
`--project`, `CODEWEAVER_PROJECT`, `CODEWEAVER_PROJECT_PYTHON`, `VIRTUAL_ENV`, `.venv`),
else CodeWeaver's own.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from codeweaver.sources.base import McpTool, SourceInfo, register_source
from codeweaver.sources.index_files import normalise_score
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
)
from codeweaver.sources.installed_docs.model import PARSED_DIR
from codeweaver.sources.installed_docs.project import (
    Environment,
    Project,
    collector_options,
    find_project,
    find_project_for,
)
from codeweaver.sources.installed_docs.ranking import RankingOptions
from codeweaver.sources.installed_docs.source import InstalledDocsSource
from codeweaver.sources.installed_docs.vectors import EMBEDDER

if TYPE_CHECKING:
    from codeweaver.config import Settings

__all__ = [
    "CollectorOptions",
    "DocEntry",
    "Environment",
    "IndexInfo",
    "IndexLoadError",
    "InstalledDocsSource",
    "ProgressCallback",
    "Project",
    "RankingOptions",
    "build_index",
    "collect_entries",
    "collector_options",
    "compute_fingerprint",
    "find_project",
    "find_project_for",
    "normalise_score",
    "source_for",
]

logger = logging.getLogger(__name__)


def source_for(
    settings: Settings, env: Environment | None, ranking: RankingOptions | None = None
) -> InstalledDocsSource:
    """The source over `env`'s docs (None or CodeWeaver's own: today's default options and
    folder), indexed under the settings' docs folder."""
    from codeweaver.embeddings import create_embedder

    # Always MiniLM: the ranking's scores are calibrated on its vectors.
    return InstalledDocsSource(
        settings.docs_index_dir,
        options=collector_options(env),
        environment=env,
        parsed_dir=settings.docs_index_dir / PARSED_DIR,
        embedder=lambda: create_embedder(EMBEDDER, settings),
        ranking=ranking,
    )


@register_source(
    "installed_docs",
    SourceInfo(
        mcp_tool=McpTool(
            "search_docs",
            "Search installed docs",
            "Search the documentation of the packages installed in the current project, at "
            "their installed versions (plus Python's own docs and npm packages' docs when "
            "configured). Best for API signatures and version-specific behaviour.",
        ),
        offline=True,
    ),
)
def _factory(settings: Settings) -> InstalledDocsSource:
    project = find_project_for(settings)
    if project.env is None:
        logger.info("installed_docs: %s; indexing CodeWeaver's own environment", project.reason)
    return source_for(settings, project.env)
