"""Reading knowledge-base files: Markdown, reST, text, HTML, PDF and source code.

Which files are read is decided in `codeweaver.kb.scan`.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from codeweaver.kb.scan import NOT_REGULAR, os_reason
from codeweaver.kb.scan import FileKind as FileKind
from codeweaver.kb.scan import file_kind as file_kind
from codeweaver.kb.scan import iter_files as iter_files

MAX_FILE_BYTES = 5 * 1024 * 1024
# UTF-32 first: its little-endian mark starts with UTF-16's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Never block on open (a FIFO swapped in after the check) nor take a terminal as ours.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class LoadError(Exception):
    """A file cannot be indexed; the message is the reason shown to the user."""


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


def load_document(path: Path, *, follow_symlinks: bool = True) -> Document:
    """Read and convert one file; raises `LoadError` with a short reason.

    Only regular files are opened (a FIFO would block, a device could be endless).
    `follow_symlinks=False` refuses a symlink, so a link swapped in after the scan is not
    followed either.
    """
    kind = file_kind(path)
    if kind is None:
        raise LoadError(f"unsupported file type ({path.suffix or path.name})")
    try:
        data, mtime = _read(path, follow_symlinks)
    except FileNotFoundError:
        raise LoadError("file not found") from None
    except IsADirectoryError:
        raise LoadError("is a directory") from None
    except OSError as exc:
        raise LoadError(os_reason(exc)) from None
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
    return Document(path, kind, text, title[:200], digest, mtime, page_starts)


def _read(path: Path, follow_symlinks: bool) -> tuple[bytes, float]:
    """The bytes and mtime of a regular file of at most `MAX_FILE_BYTES`."""
    _check_regular(os.stat(path, follow_symlinks=follow_symlinks).st_mode)
    flags = _OPEN_FLAGS if follow_symlinks else _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        _check_regular(info.st_mode)  # what was opened may not be what was checked
        too_big = LoadError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        if info.st_size > MAX_FILE_BYTES:
            raise too_big
        data = handle.read(MAX_FILE_BYTES + 1)  # the file may grow while it is read
    if len(data) > MAX_FILE_BYTES:
        raise too_big
    return data, info.st_mtime


def _check_regular(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise LoadError("is a directory")
    if stat.S_ISLNK(mode):
        raise LoadError("is a symlink")
    if not stat.S_ISREG(mode):
        raise LoadError(NOT_REGULAR)


def _decode(data: bytes) -> str:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                raise LoadError("binary file") from None
            if "\x00" in text[:8192] or _mostly_controls(text[:8192]):
                raise LoadError("binary file")
            return text
    if b"\x00" in data[:8192]:
        raise LoadError("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # Not UTF-8: accept legacy 8-bit text, but not data that is mostly control bytes.
    if _mostly_controls(data[:8192].decode("latin-1")):
        raise LoadError("binary file")
    return data.decode("cp1252", errors="replace")


def _mostly_controls(sample: str) -> bool:
    controls = sum(1 for c in sample if c < " " and c not in "\t\n\f\r")
    return controls > len(sample) * 0.05


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
        heading = _atx_heading(line)
        if heading is not None:
            return heading
        if i + 1 < len(lines) and line.strip() and _is_underline(lines[i + 1]):
            return line.strip()
    return ""


# An ATX heading's opening: up to three spaces, one to six `#`, then spaces. What follows
# is cut in Python: a lazy `(.+?)` before `\s*#*\s*$` backtracks cubically on the spaces
# of a heading, and one such line in a file hung the whole `index add`.
_ATX_OPEN = re.compile(r"\s{0,3}#{1,6}(?=\s)")


def _atx_heading(line: str) -> str | None:
    """The text of an ATX heading line ("## Usage ##" → "Usage"), else None."""
    opened = _ATX_OPEN.match(line)
    if opened is None:
        return None
    rest = line[opened.end() :]
    body = rest.lstrip()
    if not body:  # only spaces: a heading of one space when there are two of them
        return "" if len(rest) >= 2 else None
    # The text is the shortest start of `body` (one character at least) whose remainder
    # is spaces, then `#`s, then spaces.
    text = body.rstrip().rstrip("#").rstrip()
    return body[: max(len(text), 1)].strip()


def _is_underline(line: str) -> bool:
    """A setext heading's underline: a run of `=` or of `-`, spaces around."""
    marks = line.strip()
    return bool(marks) and marks in ("=" * len(marks), "-" * len(marks))


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
