"""Finding and reading knowledge-base files: Markdown, reST, text, HTML, PDF and source code."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 5 * 1024 * 1024
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "site-packages"}
)

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


class LoadError(Exception):
    """A file cannot be indexed; the message is the reason shown to the user."""


@dataclass(frozen=True)
class FileKind:
    kind: str  # markdown | rst | text | html | pdf | code
    language: str | None = None


@dataclass
class Document:
    """A file's text as it will be chunked, with what identifies its version."""

    path: Path
    kind: FileKind
    text: str
    title: str
    sha256: str
    mtime: float
    # PDF only: character offset at which each page starts in `text`.
    page_starts: list[int] = field(default_factory=list)


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


def iter_files(root: Path) -> Iterator[Path]:
    """Supported files under `root`, sorted; hidden and dependency folders are skipped."""
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            # Hidden files are skipped too: `.env` and friends often hold secrets.
            if name.startswith("."):
                continue
            path = Path(current) / name
            if file_kind(path) is not None and path.is_file():
                yield path


def load_document(path: Path) -> Document:
    """Read and convert one file; raises `LoadError` with a short reason."""
    kind = file_kind(path)
    if kind is None:
        raise LoadError(f"unsupported file type ({path.suffix or path.name})")
    try:
        stat = path.stat()
        if stat.st_size > MAX_FILE_BYTES:
            raise LoadError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        data = path.read_bytes()
    except FileNotFoundError:
        raise LoadError("file not found") from None
    except PermissionError:
        raise LoadError("permission denied") from None
    except IsADirectoryError:
        raise LoadError("is a directory") from None
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    page_starts: list[int] = []
    if kind.kind == "pdf":
        text, page_starts, pdf_title = _pdf_text(data)
        title = pdf_title or _first_line(text) or path.name
    else:
        raw = _decode(data)
        if kind.kind == "html":
            text, html_title = _html_text(raw)
            title = html_title or _markdown_title(text) or path.name
        else:
            text = raw
            title = _title(kind.kind, text) or path.name
    if not text.strip():
        raise LoadError("no text to index")
    return Document(path, kind, text, title[:200], digest, stat.st_mtime, page_starts)


def _decode(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise LoadError("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # Not UTF-8: accept legacy 8-bit text, but not data that is mostly control bytes.
    controls = sum(1 for b in data[:8192] if b < 32 and b not in (9, 10, 12, 13))
    if controls > len(data[:8192]) * 0.05:
        raise LoadError("binary file")
    return data.decode("cp1252", errors="replace")


def _title(kind: str, text: str) -> str:
    if kind == "markdown":
        return _markdown_title(text)
    if kind == "rst":
        lines = text.splitlines()
        for i in range(len(lines) - 1):
            line, under = lines[i].strip(), lines[i + 1].strip()
            if line and len(under) >= len(line) and re.fullmatch(r"([=\-~^\"'`#*+:.])\1+", under):
                return line
    return ""


def _markdown_title(text: str) -> str:
    in_fence = False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = re.match(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1).strip()
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"\s*(=+|-+)\s*", lines[i + 1]):
            return line.strip()
    return ""


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _html_text(raw: str) -> tuple[str, str]:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(raw, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    # Page chrome and code that is not content would only add noise to the chunks.
    for tag in soup(["head", "script", "style", "noscript", "template", "svg"]):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip(), title


def _pdf_text(data: bytes) -> tuple[str, list[int], str]:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception:
                raise LoadError("encrypted PDF") from None
        parts: list[str] = []
        starts: list[int] = []
        offset = 0
        for page in reader.pages:
            starts.append(offset)
            page_text = (page.extract_text() or "").strip()
            parts.append(page_text)
            offset += len(page_text) + 2  # the "\n\n" joining pages
        meta_title = ""
        if reader.metadata is not None and reader.metadata.title:
            meta_title = str(reader.metadata.title).strip()
    except LoadError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise LoadError(f"corrupt or unreadable PDF ({type(exc).__name__}: {exc})") from None
    text = "\n\n".join(parts)
    if not text.strip():
        raise LoadError("no extractable text in PDF (scanned images?)")
    return text, starts, meta_title
