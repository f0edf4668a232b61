"""Offline source: Python's own prose docs, where the machine has them (`python3-doc`).

The HTML docs Debian and Ubuntu install for each Python (`/usr/share/doc/pythonX.Y/html`)
are split into sections (tutorial, how-tos, FAQ, library and language reference prose) and
BM25-indexed under `<cache_dir>/python_docs/`; the docs must be those of the project's
Python (same major.minor). `CODEWEAVER_PYTHON_DOCS` names another folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeweaver.sources.base import SourceInfo, register_source
from codeweaver.sources.python_docs.index import IndexInfo, PythonDocsIndex
from codeweaver.sources.python_docs.sections import DocSection, find_docs
from codeweaver.sources.python_docs.source import PythonDocsSource

if TYPE_CHECKING:
    from codeweaver.config import Settings

__all__ = ["DocSection", "IndexInfo", "PythonDocsIndex", "PythonDocsSource", "find_docs"]

INDEX_DIR = "python_docs"


@register_source("python_docs", SourceInfo(mcp_tool="search_docs", offline=True))
def _factory(settings: Settings) -> PythonDocsSource:
    def python_version() -> str:
        from codeweaver.sources.installed_docs.collect import python_version as own
        from codeweaver.sources.installed_docs.project import find_project_for

        env = find_project_for(settings).env
        return env.version if env is not None else own()

    return PythonDocsSource(
        settings.cache_dir / INDEX_DIR,
        python_version,
        explicit_dir=settings.python_docs,
        cache_dir=settings.cache_dir,
    )
