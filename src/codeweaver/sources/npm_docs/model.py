"""Data shared by reading, indexing and searching: options, packages and entries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

#: (phase description, done, total): called while an index is built.
ProgressCallback = Callable[[str, int, int], None]

#: Entry kinds of a `.d.ts` declaration.
API_KINDS = frozenset(
    {"function", "class", "method", "property", "interface", "type", "enum", "variable",
     "namespace"}
)  # fmt: skip
#: The kinds an answer's code calls or constructs: cited where the answer uses them.
CALLED_KINDS = frozenset({"function", "class", "method", "property"})
OVERVIEW = "package"  # the package's description and its README's introduction
SECTION = "readme"  # one section of the README


@dataclass(frozen=True)
class NpmOptions:
    """Caps on what is read; every one enters the fingerprint (`key`)."""

    #: A `package.json`, README or `.d.ts` larger than this is skipped (bundled lib files).
    max_file_bytes: int = 1_000_000
    #: `.d.ts` files read per package, following references from its entry file.
    max_dts_files: int = 150
    #: Bytes of `.d.ts` read per package, all files together.
    max_dts_bytes: int = 5_000_000
    #: Packages read from one `node_modules` (a monorepo's hoisted folder holds ~2,000).
    max_packages: int = 5_000
    #: README sections indexed per package.
    max_sections: int = 200
    #: Docs and sections are cut to this many characters (indexed and stored).
    max_doc_chars: int = 4_000

    def key(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Package:
    """One installed package as its `package.json` describes it."""

    name: str  # "react", "@types/node"
    version: str
    path: Path  # the package's folder, resolved (inside node_modules)
    manifest: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class PackageMeta:
    """What a result shows of its package (stored once per package in the index)."""

    name: str
    version: str
    description: str = ""
    url: str = ""  # homepage, else repository, else the npm page
    licence: str = ""

    def to_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PackageMeta:
        return cls(**{f.name: str(data.get(f.name, "")) for f in fields(cls)})


@dataclass(frozen=True)
class NpmEntry:
    """One indexed document: an API of a `.d.ts`, a README section or a package overview."""

    package: str
    version: str
    kind: str  # one of API_KINDS, SECTION or OVERVIEW
    name: str  # "EventEmitter.once"; a section's headings ("Usage › Options"); the package
    signature: str  # the declaration as written, whitespace squeezed ("" for prose)
    doc: str  # JSDoc text, or the section's Markdown
    file: str  # relative to the package folder ("index.d.ts", "README.md")
    anchor: str = ""  # a README section's GitHub-style heading slug

    @property
    def is_api(self) -> bool:
        return self.kind in API_KINDS

    def to_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NpmEntry:
        values = {f.name: data.get(f.name, "") for f in fields(cls)}
        if not all(isinstance(v, str) for v in values.values()):
            raise ValueError("an entry field is not a string")
        return cls(**values)
