"""Splitting documents into overlapping chunks that keep their place in the file."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_text_splitters import TextSplitter

    from codeweaver.kb.loaders import Document

CHUNK_SIZE = 800
CHUNK_OVERLAP = 100


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    start_line: int  # 1-based line of the chunk's first character in the (converted) text
    page: int | None = None  # 1-based, PDFs only


def _splitter(kind: str, language: str | None, size: int, overlap: int) -> TextSplitter:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    name = {"markdown": "markdown", "html": "markdown", "rst": "rst"}.get(kind, language)
    if kind in {"markdown", "html", "rst", "code"} and name:
        try:
            return RecursiveCharacterTextSplitter.from_language(
                Language(name), chunk_size=size, chunk_overlap=overlap, add_start_index=True
            )
        except ValueError:  # a language the installed splitter does not know
            pass
    return RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, add_start_index=True
    )


def chunk_document(
    doc: Document, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP
) -> list[Chunk]:
    """The document's chunks, in order, with start lines (and pages for PDFs)."""
    splitter = _splitter(doc.kind.kind, doc.kind.language, size, overlap)
    pieces = splitter.create_documents([doc.text])
    # Offsets of line starts, so a character offset maps to a line by bisection.
    line_starts = [0] + [i + 1 for i, ch in enumerate(doc.text) if ch == "\n"]
    chunks: list[Chunk] = []
    for piece in pieces:
        text = piece.page_content.strip()
        if not text:
            continue
        start = int(piece.metadata.get("start_index", -1))
        if start < 0:  # the splitter could not place it; fall back to a search
            start = max(doc.text.find(text), 0)
        line = bisect.bisect_right(line_starts, start)
        page = bisect.bisect_right(doc.page_starts, start) if doc.page_starts else None
        chunks.append(Chunk(len(chunks), text, line, page))
    return chunks
