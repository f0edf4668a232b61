"""Which files `index add` reads: file kinds, and a walk that stays in the given folders.

A path given by the user is their choice: a symlink is resolved, a hidden file is read.
Inside a given folder the walk is stricter:

- symlinks are never followed. One whose target lies in a given folder is skipped
  silently as a duplicate: the walk reaches the target under its own path (and skips it
  there too if it is hidden or of an unsupported kind). One pointing anywhere else is
  reported as skipped ("symlink out of the indexed folder").
- hidden files and folders (`.env`, `.github`, …) are skipped unless `include_hidden`;
  version-control and dependency folders (`SKIPPED_DIRS`) are always skipped.
- FIFOs, sockets and devices are reported as skipped and never opened.
- unreadable folders are reported as failed ("permission denied").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codeweaver.kb.report import FileResult, Outcome

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "site-packages"}
)
OUT_OF_FOLDER = "symlink out of the indexed folder"
NOT_REGULAR = "not a regular file"

# Extension -> langchain-text-splitters `Language` value (None: generic splitting).
CODE_EXTENSIONS: dict[str, str | None] = {
    ".py": "python", ".pyi": "python", ".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js",
    ".ts": "ts", ".tsx": "ts", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".go": "go", ".rs": "rust", ".rb": "ruby", ".php": "php", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".cs": "csharp",
    ".swift": "swift", ".scala": "scala", ".lua": "lua", ".pl": "perl", ".hs": "haskell",
    ".ex": "elixir", ".exs": "elixir", ".ps1": "powershell", ".proto": "proto", ".sol": "sol",
    ".r": "r", ".tex": "latex", ".sh": None, ".bash": None, ".zsh": None, ".sql": None,
    ".yaml": None, ".yml": None, ".toml": None, ".ini": None, ".cfg": None, ".json": None,
    ".css": None, ".scss": None, ".vue": None, ".svelte": None, ".dart": None, ".m": None,
}  # fmt: skip
TEXT_EXTENSIONS = {".txt": "text", ".text": "text", ".log": "text", ".csv": "text"}
DOC_EXTENSIONS = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".rst": "rst", ".rest": "rst",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".pdf": "pdf",
}  # fmt: skip
PLAIN_NAMES = {"readme", "license", "changelog", "authors", "contributing", "notice", "todo"}
CODE_NAMES = {"makefile", "dockerfile", "justfile", "rakefile", "gemfile"}


@dataclass(frozen=True)
class FileKind:
    kind: str  # markdown | rst | text | html | pdf | code
    language: str | None = None


def file_kind(path: Path) -> FileKind | None:
    """The kind of a file by its name, or None when it is not a supported type."""
    suffix = path.suffix.lower()
    if suffix in DOC_EXTENSIONS:
        return FileKind(DOC_EXTENSIONS[suffix])
    if suffix in TEXT_EXTENSIONS:
        return FileKind("text")
    if suffix in CODE_EXTENSIONS:
        return FileKind("code", CODE_EXTENSIONS[suffix])
    stem = path.name.lower()
    if stem in CODE_NAMES:
        return FileKind("code")
    if not suffix and stem in PLAIN_NAMES:
        return FileKind("text")
    return None


def os_reason(exc: OSError) -> str:
    """A short reason for an error reading a file or folder."""
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "not found"
    return f"cannot read: {exc.strerror or exc}"


@dataclass
class Scan:
    """What `scan` found: files to read, the folders given, and paths not read."""

    files: dict[Path, str] = field(default_factory=dict)  # resolved path -> display path
    folders: list[Path] = field(default_factory=list)  # resolved
    problems: list[FileResult] = field(default_factory=list)  # outcome skipped or failed


def scan(paths: Sequence[str | Path], *, include_hidden: bool = False) -> Scan:
    """The files to index for the paths given, in the order given; see the module doc."""
    result = Scan()
    given: list[tuple[Path, bool]] = []  # (resolved, is a folder)
    for raw in paths:
        text = str(raw)
        if not text.strip():
            # Path("") means ".": an empty argument must not index the current folder.
            result.problems.append(FileResult(text, text, "failed", 0, "empty path"))
            continue
        path = Path(raw).expanduser()
        try:
            mode = os.stat(path).st_mode  # follows symlinks: the user named this path
        except OSError as exc:
            result.problems.append(FileResult(text, text, "failed", 0, os_reason(exc)))
            continue
        resolved = path.resolve()
        if stat.S_ISDIR(mode):
            if resolved not in result.folders:
                result.folders.append(resolved)
                given.append((resolved, True))
        elif stat.S_ISREG(mode):
            given.append((resolved, False))
        else:
            result.problems.append(FileResult(str(resolved), text, "skipped", 0, NOT_REGULAR))
    problems: list[FileResult] = []
    for path, is_folder in given:
        if not is_folder:
            result.files.setdefault(path, path.name)
            continue
        walk = iter_files(
            path, include_hidden=include_hidden, roots=result.folders, problems=problems
        )
        for found in walk:
            result.files.setdefault(found, found.relative_to(path.parent).as_posix())
    # Nested folders (or a folder and a file in it) given together: report each path once.
    seen = {problem.path for problem in result.problems}
    for problem in problems:
        if problem.path not in seen:
            seen.add(problem.path)
            result.problems.append(problem)
    return result


def iter_files(
    root: Path,
    *,
    include_hidden: bool = False,
    roots: Sequence[Path] = (),
    problems: list[FileResult] | None = None,
) -> Iterator[Path]:
    """Supported regular files under the folder `root`, sorted, folder by folder.

    Symlinks pointing into `root` or `roots` are skipped silently (duplicates); any other
    symlink, non-regular file and unreadable folder is appended to `problems`.
    """
    root = root.resolve()
    inside = [root, *(r.resolve() for r in roots)]

    def report(path: Path, outcome: Outcome, reason: str) -> None:
        if problems is not None:
            display = path.relative_to(root.parent).as_posix()
            problems.append(FileResult(str(path), display, outcome, 0, reason))

    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            report(folder, "failed", os_reason(exc))
            continue
        subfolders: list[Path] = []
        for entry in entries:
            # Hidden files are skipped by default: `.env` and friends often hold secrets.
            if entry.name.startswith(".") and not include_hidden:
                continue
            path = Path(entry.path)
            try:
                verdict = _classify(entry, path, inside)
            except OSError as exc:
                report(path, "failed", os_reason(exc))
                continue
            if verdict == "folder":
                subfolders.append(path)
            elif verdict == "file":
                yield path
            elif verdict:
                report(path, "skipped", verdict)
        stack.extend(reversed(subfolders))  # popped in sorted order


def _classify(entry: os.DirEntry[str], path: Path, inside: Sequence[Path]) -> str:
    """`folder`, `file`, a reason to report the entry as skipped, or "" to skip it silently."""
    if entry.is_symlink():
        target = Path(os.path.realpath(path))
        if any(target.is_relative_to(folder) for folder in inside):
            return ""  # the walk reaches the target under its own path
        # Name the links that would have been read: folders, and files of a supported kind.
        wanted = file_kind(path) is not None or entry.is_dir(follow_symlinks=True)
        return OUT_OF_FOLDER if wanted else ""
    if entry.is_dir(follow_symlinks=False):
        return "" if entry.name in SKIPPED_DIRS else "folder"
    if file_kind(path) is None:
        return ""
    mode = entry.stat(follow_symlinks=False).st_mode
    return "file" if stat.S_ISREG(mode) else NOT_REGULAR
