"""The installed versions of the libraries a question names, and the sources written for
an older major version of one of them.

Precision first: a wrong "you have X installed" line misleads more than a missing one.
A name counts when it is at least 3 characters long and appears as a whole word
(`pandas`, `pandas.read_csv`, `scikit-learn`); a name that is a stopword is never
matched, and one that is a common English word (`requests`, `six`, `click`) only when
written as code, capitalised inside a sentence or beside a library cue (`import six`,
`six 1.16`, `the click library`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from codeweaver.agent.state import SearchResult
from codeweaver.sources.base import KnowsInstalledVersions, Source
from codeweaver.words.stopwords import STOPWORDS

MIN_NAME = 3
#: Package names that are also everyday English words (PyPI and npm favourites).
COMMON_WORDS = frozenset(
    """requests six attrs click rich black mock future packaging typing wheel decorator
    markdown regex arrow celery tenacity pillow toolz cache events debug chalk commander
    express react request mime once inherits path util buffer string glob color colors
    moment next async yargs ignore minimist semver through bluebird immutable classnames
    prettier hooks signal retry retrying docker jinja sympy pip setuptools httpx typer
    """.split()
)
_VERSION = r"v?\d+(?:\.\d+)*"
# A mention of an old version needs a dot: `pandas 1 column` is no version.
_DOTTED = r"v?\d+\.\d+(?:\.\d+)*"
_CUE_BEFORE = re.compile(r"(?:import|from|install|add|require\(['\"]?)\s*$", re.IGNORECASE)
# The operator carries its own spaces: two `\s*` in a row split a run of spaces n ways.
_CUE_AFTER = re.compile(
    rf"^(?:\s*(?:(?:==|>=|<=|~=|@|\^|~)\s*)?{_VERSION}\b|\s+(?:library|package|module|lib)\b|\.\w)",
    re.IGNORECASE,
)
SOURCE_SO = "stackoverflow"


def installed_versions(sources: Iterable[Source]) -> dict[str, str]:
    """Lower-cased package name -> version, merged over every source that knows them
    (the first source naming a package wins)."""
    merged: dict[str, str] = {}
    for source in sources:
        if not isinstance(source, KnowsInstalledVersions):
            continue
        try:
            versions = source.installed_versions()
        except Exception:  # a source's bookkeeping must never cost the answer
            continue
        for name, version in versions.items():
            if name and version:
                merged.setdefault(name.lower(), version)
    return merged


def _name_pattern(name: str) -> re.Pattern[str]:
    # `-`, `@` and `/` belong to package names: `pandas-stubs` does not name `pandas`.
    # Only ASCII word characters: a Korean particle follows a name directly (`pandas에서`).
    return re.compile(rf"(?<![A-Za-z0-9_@/-]){re.escape(name)}(?![A-Za-z0-9_-])", re.I)


def _as_code(text: str, start: int, end: int) -> bool:
    """Whether the name at `text[start:end]` is written as code or beside a library cue."""
    in_backticks = text.count("`", 0, start) % 2 == 1
    before = text[:start].rstrip()
    # Capitalised inside a sentence: a proper name (`use React hooks`), not the word.
    proper = text[start].isupper() and bool(before) and before[-1] not in ".!?:\n"
    return (
        in_backticks
        or proper
        or bool(_CUE_BEFORE.search(text[max(0, start - 20) : start]))
        or bool(_CUE_AFTER.match(text[end : end + 20]))
    )


def names_in(question: str, versions: Mapping[str, str]) -> list[tuple[str, str]]:
    """`(name, version)` of the installed packages `question` names, in question order."""
    found: list[tuple[int, str, str]] = []
    lowered = question.lower()
    for name, version in versions.items():
        key = name.lower()
        # The substring test first: an environment has hundreds of names to try.
        if len(key) < MIN_NAME or key in STOPWORDS or key not in lowered:
            continue
        for match in _name_pattern(name).finditer(question):
            if key not in COMMON_WORDS or _as_code(question, match.start(), match.end()):
                found.append((match.start(), name, version))
                break
    return [(name, version) for _, name, version in sorted(found)]


def _major(version: str) -> int | None:
    match = re.match(r"v?(\d+)", version)
    return int(match.group(1)) if match else None


def older_version(text: str, named: list[tuple[str, str]]) -> tuple[str, str] | None:
    """`(name, version)` as `text` mentions it, when its major version is lower than the
    installed one (`pandas 0.25` with 2.1.4 installed); None if no such mention."""
    for name, installed in named:
        mine = _major(installed)
        if mine is None:
            continue
        name_at = rf"(?<![A-Za-z0-9_@/-]){re.escape(name)}"
        # The marker carries its own spaces, as in `_CUE_AFTER`.
        pattern = rf"{name_at}\s*(?:(?:==|version\s|@)\s*)?({_DOTTED})\b"
        for match in re.finditer(pattern, text, re.IGNORECASE):
            theirs = _major(match.group(1))
            if theirs is not None and theirs < mine:
                return name, match.group(1).lstrip("vV")
    return None


def dated_title(result: SearchResult, named: list[tuple[str, str]]) -> str:
    """A Stack Overflow result's title, with its date and the version it was written for
    when that is an older major version than the installed one."""
    title = result["title"]
    if result.get("source") != SOURCE_SO or not named:
        return title
    text = f"{title}\n{result.get('snippet', '')}\n{result.get('summary', '')}"
    older = older_version(text, named)
    if older is None:
        return title
    date = (result.get("date") or "")[:10]
    when = f"answered {date}, " if date else ""
    return f"{title} ({when}for {older[0]} {older[1]})"
