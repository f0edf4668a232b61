"""The `project` argument: a remote client's environment, as package name -> version.

A client over HTTP cannot let the server read its folder, so it says which packages (and
versions) its project uses. The server cannot index docs it does not have, so the
argument never changes what is searched for a package; it says, next to the results, where
the server's docs are of another version than the project's, and which packages the
question names that this server does not have at all. A reference keeps the version the
docs are of: citing `pandas:concat@2.2.3` for a 2.1.0 docstring would be a false citation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from codeweaver.agent.answering.versions import names_in

MAX_PACKAGES = 200
MAX_VERSION_CHARS = 64
MAX_NOTES = 20  # a handful is useful; 200 lines of "not installed" would bury the results
# PyPI's rule for a distribution name (letters, digits, `.`, `_`, `-`, alphanumeric at
# both ends) and npm's (lower case, optionally `@scope/`); both at most 214 characters.
PYPI_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,212}[A-Za-z0-9])?"
NPM_NAME = r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*"
NAME_PATTERN = rf"^(?:{PYPI_NAME}|{NPM_NAME})$"
# A version or a specifier as lock files write them (`2.2.3`, `1.0.0-rc.1+local`, `^4.17`).
VERSION_PATTERN = rf"^[A-Za-z0-9.+!_~^<>=*:-]{{1,{MAX_VERSION_CHARS}}}$"
_NAME = re.compile(NAME_PATTERN)
_VERSION = re.compile(VERSION_PATTERN)
_SEPARATORS = re.compile(r"[-_.]+")
# Which of `search_docs`'s sources document each language's packages.
LANGUAGE_SOURCES: dict[str, frozenset[str]] = {
    "python": frozenset({"installed_docs", "python_docs"}),
    "node": frozenset({"npm_docs"}),
}


class Project(BaseModel):
    """The caller's environment; see the module docstring for what the server does with it."""

    model_config = ConfigDict(extra="forbid")

    packages: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_PACKAGES,
        description=f"Package name -> the version the project uses (at most {MAX_PACKAGES}; "
        "PyPI or npm names, versions up to 64 characters), e.g. "
        '`{"pandas": "2.2.3", "numpy": "2.1.0"}`.',
        json_schema_extra={
            "propertyNames": {"pattern": NAME_PATTERN, "maxLength": 214},
            "additionalProperties": {"type": "string", "pattern": VERSION_PATTERN},
        },
    )
    language: Literal["python", "node"] | None = Field(
        default=None,
        description="The project's language: `search_docs` then searches only that "
        "language's docs.",
    )

    @field_validator("packages")
    @classmethod
    def _valid(cls, packages: dict[str, str]) -> dict[str, str]:
        # The message names the position, never the value: it is the caller's data.
        for n, (name, version) in enumerate(packages.items(), 1):
            if len(name) > 214 or not _NAME.match(name):
                raise ValueError(f"package {n}: the name is not a valid PyPI or npm name")
            if not _VERSION.match(version):
                raise ValueError(
                    f"package {n}: the version must be 1-{MAX_VERSION_CHARS} characters of "
                    "letters, digits and . + ! _ ~ ^ < > = * : -"
                )
        return packages


ProjectArg = Annotated[
    Project | None,
    Field(
        description="Your project's environment, when the server cannot see your folder "
        "(e.g. over HTTP): the packages and versions it uses. Results whose docs are of "
        "another version, and named packages this server does not have, are noted; "
        "references keep the version the server's docs are of."
    ),
]


def canonical(name: str) -> str:
    """PyPI's normalised form (`Scikit_Learn` -> `scikit-learn`); npm names are lower case."""
    return _SEPARATORS.sub("-", name).lower()


def docs_sources(names: Sequence[str], project: Project | None) -> tuple[str, ...]:
    """The sources of `names` that document the project's language (all without one)."""
    if project is None or project.language is None:
        return tuple(names)
    wanted = LANGUAGE_SOURCES[project.language]
    return tuple(name for name in names if name in wanted)


def documented(result: Mapping[str, Any]) -> tuple[str, str] | None:
    """`(package, version)` a docs result is of, from its reference: `pandas:concat@2.1.0`
    (installed docs) or `npm:@types/node@20.1.0#readme:x` (npm docs); None for others."""
    reference = str(result.get("reference") or "")
    source = result.get("source")
    if source == "installed_docs":
        package, _, rest = reference.partition(":")
        _, at, version = rest.rpartition("@")
    elif source == "npm_docs" and reference.startswith("npm:"):
        package, at, version = reference[4:].split("#", 1)[0].rpartition("@")
    else:
        return None
    if not package or not at or not version or package == "python":
        return None
    return package, version


def project_notes(
    project: Project | None,
    text: str,
    results: Iterable[Mapping[str, Any]],
    server_versions: Mapping[str, str],
) -> list[str]:
    """What the caller should know about the server's docs against their project: the
    packages `text` names that the server lacks, then those whose docs here are of another
    version than the project's."""
    if project is None or not project.packages:
        return []
    theirs = {canonical(name): (name, version) for name, version in project.packages.items()}
    ours = {canonical(name): version for name, version in server_versions.items()}
    notes: list[str] = []
    for name, version in names_in(text, project.packages):
        if canonical(name) not in ours:
            notes.append(
                f"{name} {version} is not installed on this server; its docs are not indexed "
                "here (answers about it come from the web sources, if any)"
            )
    seen: set[str] = set()
    for result in results:
        found = documented(result)
        if found is None or canonical(found[0]) in seen or canonical(found[0]) not in theirs:
            continue
        seen.add(canonical(found[0]))
        name, version = theirs[canonical(found[0])]
        if _same_version(version, found[1]):
            continue
        notes.append(
            f"{name}: the docs here are of version {found[1]}, your project uses {version}; "
            "check version-specific details against it"
        )
    return notes[:MAX_NOTES]


def _same_version(theirs: str, ours: str) -> bool:
    """Whether the project's version (or specifier: `^2.2.3`, `==2.2.3`) is the docs' one."""
    return theirs.lstrip("^~=<>!v ") == ours.lstrip("v")
