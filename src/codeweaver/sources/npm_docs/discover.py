"""Find the project's `node_modules`, list its packages and read their files safely.

Only the packages directly under `node_modules` (and `@scope/name`) are read: the ones the
project's code can import. Nested `node_modules` hold other versions private to a dependency,
and dot folders (`.bin`, `.pnpm`, `.cache`) are tooling. A pnpm package links into
`node_modules/.pnpm`, inside `node_modules`, and is read; a link leading out of it (a
workspace package, a linked checkout) is not: every file is resolved first and must lie in
the resolved `node_modules`.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path
from typing import Any

from codeweaver.sources.npm_docs.model import NpmOptions, Package, PackageMeta

logger = logging.getLogger(__name__)

NODE_MODULES = "node_modules"
FORMAT_VERSION = 1
# npm's own rule: lower case, URL-safe, at most 214 characters, optionally `@scope/`.
_NAME = re.compile(r"(?:@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*", re.IGNORECASE)
_MAX_LICENCE = 64


# --------------------------------------------------------------------------- finding


def search_folders(start: Path, root: Path) -> tuple[Path, ...]:
    """`start` and its parents up to `root`: where `node_modules` is looked for, nearest
    first (as Node resolves imports; a monorepo's app folder may hold its own)."""
    folders = [start]
    if start != root and root in start.parents:
        folders += [p for p in start.parents if p == root or root in p.parents]
    return tuple(folders)


def find_node_modules(folders: tuple[Path, ...]) -> Path | None:
    """The first `node_modules` folder of `folders` (stat calls only)."""
    for folder in folders:
        candidate = folder / NODE_MODULES
        if candidate.is_dir():
            return candidate
    return None


# --------------------------------------------------------------------------- reading


def read_within(path: Path, area: Path, max_bytes: int) -> bytes | None:
    """The bytes of `path` when it resolves to a regular file inside `area` (resolved) of
    at most `max_bytes`; None otherwise (a link out, a folder, too big, unreadable)."""
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(area):
            logger.debug("npm_docs: not following %s out of %s", path, area)
            return None
        if not real.is_file():
            return None
        if real.stat().st_size > max_bytes:
            logger.debug("npm_docs: skipping %s (over %d bytes)", path, max_bytes)
            return None
        return real.read_bytes()
    except (OSError, RuntimeError):  # gone, unreadable, a link loop
        return None


def _package_dirs(node_modules: Path) -> Iterator[Path]:
    for folder in _folders(node_modules):
        if folder.name.startswith("@"):
            yield from _folders(folder)
        else:
            yield folder


def _folders(folder: Path) -> list[Path]:
    """Sub-folders (or links to folders) of `folder` not named with a dot, sorted."""
    try:
        with os.scandir(folder) as entries:
            found = [Path(e.path) for e in entries if not e.name.startswith(".") and e.is_dir()]
    except OSError:
        return []
    return sorted(found)


def list_packages(node_modules: Path, options: NpmOptions) -> list[Package]:
    """The packages of `node_modules` with a readable `package.json` naming them, sorted by
    name; links out of `node_modules` are skipped."""
    try:
        area = node_modules.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    found: dict[str, Package] = {}
    for folder in _package_dirs(node_modules):
        if len(found) >= options.max_packages:
            logger.warning("npm_docs: reading only %d packages", options.max_packages)
            break
        try:
            real = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not real.is_relative_to(area) or real == area:
            logger.debug("npm_docs: not following %s out of %s", folder, area)
            continue
        manifest = read_manifest(real / "package.json", area, options)
        if manifest is None:
            continue
        name, version = manifest.get("name"), manifest.get("version")
        if isinstance(name, str) and isinstance(version, str) and _NAME.fullmatch(name):
            found.setdefault(name, Package(name, version.strip(), real, manifest))
    return sorted(found.values(), key=lambda p: p.name)


def read_manifest(path: Path, area: Path, options: NpmOptions) -> dict[str, Any] | None:
    data = read_within(path, area, options.max_file_bytes)
    if data is None:
        return None
    try:
        manifest = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def compute_fingerprint(packages: list[Package], options: NpmOptions) -> str:
    """sha256 over the format, the options and the sorted (name, version) pairs."""
    material = {
        "format": FORMAT_VERSION,
        "options": options.key(),
        "packages": sorted([p.name, p.version] for p in packages),
    }
    return sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def folder_key(node_modules: Path) -> str:
    """Names a project's index folder: a digest of its resolved `node_modules`."""
    try:
        real = node_modules.resolve()
    except (OSError, RuntimeError):
        real = node_modules.absolute()
    return sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]


# --------------------------------------------------------------------------- metadata


def npm_page(name: str, version: str) -> str:
    return f"https://www.npmjs.com/package/{name}/v/{version}"


def _web_url(text: str) -> str:
    """A repository field as a browsable https URL ("" when it cannot be made one)."""
    text = text.strip()
    shorthand = re.fullmatch(r"(?:github:)?([\w.-]+)/([\w.-]+)", text)
    if shorthand:
        return f"https://github.com/{shorthand[1]}/{shorthand[2].removesuffix('.git')}"
    for host in ("gitlab", "bitbucket"):
        if text.startswith(f"{host}:"):
            suffix = ".org" if host == "bitbucket" else ".com"
            return f"https://{host}{suffix}/{text.split(':', 1)[1].removesuffix('.git')}"
    text = re.sub(r"^git\+", "", text)
    text = re.sub(r"^(?:git|ssh)://(?:git@)?", "https://", text)
    text = re.sub(r"^git@([^:/]+):", r"https://\1/", text)
    text = text.removesuffix(".git")
    return text if re.match(r"https?://[^\s/]+\.[^\s/]+", text) else ""


def package_url(manifest: dict[str, Any], name: str, version: str) -> str:
    """`homepage`, else the `repository` (its sub-folder in a monorepo), else the npm page."""
    home = manifest.get("homepage")
    if isinstance(home, str) and re.match(r"https?://\S+$", home.strip()):
        return home.strip()
    repo = manifest.get("repository")
    url, folder = "", ""
    if isinstance(repo, str):
        url = _web_url(repo)
    elif isinstance(repo, dict) and isinstance(repo.get("url"), str):
        url = _web_url(repo["url"])
        folder = str(repo.get("directory") or "").strip("/")
    if url and folder and url.startswith("https://github.com/"):
        url = f"{url}/tree/HEAD/{folder}"
    return url or npm_page(name, version)


def licence_of(manifest: dict[str, Any]) -> str:
    """The `license` field (SPDX expression, or the legacy object/array forms); "" when
    missing, unnamed (`SEE LICENSE IN …`) or too long to be a name."""
    value: Any = manifest.get("license")
    if value is None:
        value = manifest.get("licenses")
    if isinstance(value, list):
        names = [licence_of({"license": v}) for v in value]
        value = " OR ".join(n for n in names if n)
    if isinstance(value, dict):
        value = value.get("type")
    if not isinstance(value, str):
        return ""
    value = " ".join(value.split())
    if value.upper().startswith("SEE LICENSE"):  # a file's name, not a licence's
        return ""
    return value if len(value) <= _MAX_LICENCE else ""


def package_meta(package: Package) -> PackageMeta:
    description = package.manifest.get("description")
    return PackageMeta(
        name=package.name,
        version=package.version,
        description=" ".join(description.split()) if isinstance(description, str) else "",
        url=package_url(package.manifest, package.name, package.version),
        licence=licence_of(package.manifest),
    )
