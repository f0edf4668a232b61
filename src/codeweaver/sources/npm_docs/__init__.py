"""Offline source: the docs of a JavaScript/TypeScript project's installed npm packages.

`NpmDocsSource` reads the packages directly under the project's `node_modules` (scoped
ones included; `discover`): each one's `package.json`, its README split into sections
(`readme`) and the API its `.d.ts` files declare, with JSDoc (`dts`, parsed with
tree-sitter's TypeScript grammar, compiled into its wheel). The entries are indexed with
BM25 and cached under `<cache_dir>/npm_docs/`, rebuilt when the packages' (name, version)
pairs change (`index`).

`node_modules` is looked for from the project folder (`--project`, `CODEWEAVER_PROJECT`,
else the working directory) up to the project root: the nearest folder holding `.git`, as
for the installed Python docs. Without one the source is skipped, saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codeweaver.sources.base import SourceInfo, register_source
from codeweaver.sources.index_files import normalise_score
from codeweaver.sources.installed_docs.project import find_root
from codeweaver.sources.npm_docs.discover import search_folders
from codeweaver.sources.npm_docs.index import IndexInfo, NpmIndex
from codeweaver.sources.npm_docs.model import NpmEntry, NpmOptions
from codeweaver.sources.npm_docs.source import NpmDocsSource

if TYPE_CHECKING:
    from codeweaver.config import Settings

__all__ = [
    "IndexInfo",
    "NpmDocsSource",
    "NpmEntry",
    "NpmIndex",
    "NpmOptions",
    "normalise_score",
    "project_folders",
]

INDEX_DIR = "npm_docs"


def project_folders(project: Path | None) -> tuple[Path, ...]:
    """Where the project's `node_modules` may be: `project` (default: the working
    directory) and its parents up to the project root. Never raises."""
    try:
        start = Path(project or Path.cwd()).expanduser().resolve()
        return search_folders(start, find_root(start))
    except (OSError, RuntimeError, ValueError):  # a vanished working directory, a link loop
        return (Path(project or ".").absolute(),)


@register_source("npm_docs", SourceInfo(mcp_tool="search_docs", offline=True))
def _factory(settings: Settings) -> NpmDocsSource:
    return NpmDocsSource(settings.cache_dir / INDEX_DIR, project_folders(settings.project))
