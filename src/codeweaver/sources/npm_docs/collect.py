"""The entries of one package: its overview, its README's sections and its `.d.ts` API.

The declaration files read start at the package's types entry: `types` or `typings` in
`package.json`, else the `types` condition of `exports["."]`, else the `.d.ts` beside
`main`, else `index.d.ts`; then every relative file those import, re-export or reference
(`/// <reference path>`), breadth first, within the package folder and the caps of
`NpmOptions`. An `@types/x` package is read the same way: its entries are `x`'s API.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from codeweaver.sources.npm_docs.discover import package_meta, read_within
from codeweaver.sources.npm_docs.dts import DtsFile, parse_dts
from codeweaver.sources.npm_docs.model import (
    OVERVIEW,
    SECTION,
    NpmEntry,
    NpmOptions,
    Package,
    PackageMeta,
    ProgressCallback,
)
from codeweaver.sources.npm_docs.readme import split_readme

logger = logging.getLogger(__name__)

_DTS = (".d.ts", ".d.mts", ".d.cts")
_SCRIPT = re.compile(r"\.(?:[mc]?[jt]s|[jt]sx)$")
_README = re.compile(r"readme(?:\.(?:md|markdown|mdown|txt))?", re.IGNORECASE)


# --------------------------------------------------------------------------- .d.ts files


def exports_types(exports: Any, depth: int = 0) -> str:
    """The `types` condition of `exports["."]` (conditions may nest: import → types)."""
    if depth > 4:
        return ""
    if isinstance(exports, dict):
        if "." in exports:
            return exports_types(exports["."], depth + 1)
        for key in ("types", "typings"):
            if isinstance(exports.get(key), str):
                return str(exports[key])
        for value in exports.values():
            found = exports_types(value, depth + 1)
            if found:
                return found
    if isinstance(exports, list):
        for value in exports:
            found = exports_types(value, depth + 1)
            if found:
                return found
    return ""


def types_entries(manifest: dict[str, Any]) -> list[str]:
    """Candidate types entry files, relative to the package folder, best first."""
    found: list[str] = []
    for key in ("types", "typings"):
        if isinstance(manifest.get(key), str):
            found.append(manifest[key])
    found.append(exports_types(manifest.get("exports")))
    if isinstance(manifest.get("main"), str):
        found.append(manifest["main"])
    found.append("index.d.ts")
    paths: list[str] = []
    for entry in filter(None, (_relative("", f) for f in found if f)):
        # A script or a folder names the declarations beside it or inside it.
        paths += [entry] if entry.endswith(_DTS) else referenced_files("", entry)
    return list(dict.fromkeys(p for p in paths if p))


def _relative(folder: str, spec: str) -> str:
    """`spec` joined to `folder` (both relative to the package), or "" if it leaves it."""
    joined = posixpath.normpath(posixpath.join(folder, spec.strip()))
    if joined in ("..", ".") or joined.startswith(("../", "/")):
        return ""
    return joined


def referenced_files(folder: str, spec: str) -> list[str]:
    """The declaration files an import of `spec` from `folder` may mean."""
    if spec.endswith(_DTS):
        return [_relative(folder, spec)]
    stem = _SCRIPT.sub("", spec)
    return [_relative(folder, stem + ext) for ext in (*_DTS, "/index.d.ts")]


def declaration_files(
    package: Package, area: Path, options: NpmOptions
) -> Iterator[tuple[str, DtsFile]]:
    """(relative path, parsed file) of the package's declaration files, entry first."""
    entry = next((c for c in types_entries(package.manifest) if (package.path / c).is_file()), "")
    queue, seen = deque([entry] if entry else []), {entry}
    budget, count = options.max_dts_bytes, 0
    while queue and count < options.max_dts_files and budget > 0:
        relative = queue.popleft()
        data = read_within(package.path / relative, area, min(options.max_file_bytes, budget))
        if data is None:
            continue
        budget -= len(data)
        count += 1
        parsed = parse_dts(data, options.max_doc_chars)
        yield relative, parsed
        folder = posixpath.dirname(relative)
        for spec in parsed.references:
            for option in referenced_files(folder, spec):
                if option and option not in seen and (package.path / option).is_file():
                    seen.add(option)
                    queue.append(option)
                    break


# --------------------------------------------------------------------------- entries


def _readme(package: Package, area: Path, options: NpmOptions) -> tuple[str, str]:
    """(file name, text) of the package's README; ("", "") when it has none."""
    try:
        names = sorted(p.name for p in package.path.iterdir() if _README.fullmatch(p.name))
    except OSError:
        return "", ""
    for name in sorted(names, key=lambda n: (not n.lower().endswith(".md"), n)):
        data = read_within(package.path / name, area, options.max_file_bytes)
        if data is not None:
            return name, data.decode("utf-8", "replace")
    return "", ""


def package_entries(
    package: Package, area: Path, options: NpmOptions
) -> tuple[PackageMeta, list[NpmEntry]]:
    """The package's metadata and entries: overview, README sections, then its API."""
    meta = package_meta(package)
    name, version = package.name, package.version
    entries: list[NpmEntry] = []
    readme_file, readme = _readme(package, area, options)
    sections = split_readme(readme, options.max_sections, options.max_doc_chars) if readme else []
    intro = sections[0].text if sections and not sections[0].path else ""
    overview = "\n\n".join(t for t in (meta.description, intro) if t)
    if overview:
        source = readme_file if intro else "package.json"
        entries.append(NpmEntry(name, version, OVERVIEW, name, "", overview, source))
    for section in sections:
        if section.path:
            title = " › ".join(section.path)
            entries.append(
                NpmEntry(name, version, SECTION, title, "", section.text, readme_file,
                         section.anchor)
            )  # fmt: skip
    for relative, parsed in declaration_files(package, area, options):
        for api in parsed.apis:
            entries.append(
                NpmEntry(name, version, api.kind, api.name, api.signature, api.doc, relative)
            )
    return meta, _unique(entries)


def _unique(entries: list[NpmEntry]) -> list[NpmEntry]:
    """One entry per reference (a name declared in two files: the first, the entry's)."""
    seen: set[tuple[str, str]] = set()
    kept: list[NpmEntry] = []
    for entry in entries:
        key = (entry.kind if entry.kind in (OVERVIEW, SECTION) else "api", entry.name)
        if entry.kind == SECTION:
            key = (SECTION, entry.anchor)
        if key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


def collect(
    packages: list[Package],
    node_modules: Path,
    options: NpmOptions,
    progress: ProgressCallback | None = None,
) -> tuple[list[PackageMeta], list[NpmEntry]]:
    """Every package's metadata and entries; a package that cannot be read is skipped."""
    area = node_modules.resolve()
    metas: list[PackageMeta] = []
    entries: list[NpmEntry] = []
    for done, package in enumerate(packages, 1):
        try:
            meta, found = package_entries(package, area, options)
        except Exception:  # one broken package must not cost the others
            logger.warning("npm_docs: cannot read %s", package.path, exc_info=True)
            continue
        metas.append(meta)
        entries += found
        if progress is not None:
            progress("Reading npm packages", done, len(packages))
    return metas, entries
