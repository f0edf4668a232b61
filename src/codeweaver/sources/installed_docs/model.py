"""Data shared by collection and indexing: options, progress callback, `DocEntry`, docstrings."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: (phase description, done, total) — called while a build is running.
ProgressCallback = Callable[[str, int, int], None]
#: Under the index folder: one sub-folder per project environment (`project.env_index_dir`).
ENVS_DIR = "envs"
#: Under the index folder: entries of each distribution as last parsed (`collect`).
PARSED_DIR = "parsed"


@dataclass(frozen=True)
class PythonFacts:
    """The Python whose stdlib is indexed, when it is not the one running CodeWeaver."""

    version: str  # `platform.python_version()`: stamped on stdlib entries, names the docs URLs
    sys_version: str  # `sys.version`: part of the fingerprint
    #: `sys.stdlib_module_names` of that Python (empty: the running Python's).
    stdlib_names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CollectorOptions:
    """What to collect. Tests point `paths` at a fake site-packages and switch the rest off."""

    include_stdlib: bool = True
    include_builtin_modules: bool = True
    include_topics: bool = True
    include_distributions: bool = True
    #: Folders searched for `*.dist-info`; None = `sys.path` (what `importlib.metadata` uses).
    paths: tuple[Path, ...] | None = None
    #: Stdlib folder; None = `sysconfig.get_paths()["stdlib"]`.
    stdlib_dir: Path | None = None
    #: Another Python's facts (a project's environment); None = the running Python.
    python: PythonFacts | None = None
    #: Source files larger than this are skipped (generated code, data tables).
    max_file_bytes: int = 800_000
    #: Docstrings are cut to this many characters (indexed and stored).
    max_doc_chars: int = 4000

    def key(self) -> dict[str, Any]:
        """The options that change the index content (part of the fingerprint; `python`
        enters it as its `sys_version`, see `indexer.compute_fingerprint`)."""
        return {
            "stdlib": self.include_stdlib,
            "builtin": self.include_builtin_modules,
            "topics": self.include_topics,
            "dists": self.include_distributions,
            "stdlib_dir": str(self.stdlib_dir or ""),
            "max_file_bytes": self.max_file_bytes,
            "max_doc_chars": self.max_doc_chars,
        }


@dataclass(frozen=True)
class DocEntry:
    """One documented object (or language topic), as stored in the index metadata."""

    name: str  # public qualified name ("json.loads", "builtins.open") or topic label ("for")
    kind: str  # module | class | function | method | property | topic
    module: str  # public module the name lives in ("" for topics)
    signature: str
    doc: str  # normalised docstring, cut to `max_doc_chars`
    package: str  # "python" for the stdlib, else the canonical distribution name
    display: str  # "Python" or the distribution name as published
    version: str
    home: str = ""  # distribution documentation/home page ("" if none, or stdlib)
    path: str = ""  # source file ("" for C modules and topics)
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["aliases"] = list(self.aliases)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocEntry:
        values = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        values["aliases"] = tuple(str(a) for a in data.get("aliases", ()))
        for name in cls.__dataclass_fields__:
            if name != "aliases" and not isinstance(values.get(name, ""), str):
                raise ValueError(f"entry field {name!r} is not a string")
        return cls(**values)


_RULE_LINE = re.compile(r"^\s*([*=\-~^#])\1{3,}\s*$")
_SPACES = re.compile(r"[ \t]{2,}")


def normalise_doc(text: str) -> str:
    """Dedent, drop reST underline rows, squeeze blank lines and prose spaces.

    Indented lines (code examples, parameter tables) keep their inner spacing.
    """
    out: list[str] = []
    for raw in inspect.cleandoc(text.expandtabs(4)).splitlines():
        line = raw.rstrip()
        if _RULE_LINE.match(line):
            continue
        if not line:
            if out and out[-1]:
                out.append("")
            continue
        out.append(line if line[0] == " " else _SPACES.sub(" ", line))
    return "\n".join(out).strip()
