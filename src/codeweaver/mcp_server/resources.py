"""Resource templates for what citations point to: an installed API page, a knowledge-base
file.

Both only read what the server has indexed. A docs URI is looked up by name in the loaded
installed-docs index (never built here: a read must not start a minute-long build). A
knowledge-base path must be one the knowledge base lists, matched exactly: it is never
joined to a folder, so `..`, an absolute path or a file beside an indexed one cannot be
read. The SDK refuses `..` and absolute paths in template parameters before this runs, too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from codeweaver.mcp_server.uris import DOCS_TEMPLATE, KB_TEMPLATE, docs_uri

if TYPE_CHECKING:
    from codeweaver.api.service import ChatService

MAX_KB_BYTES = 2_000_000  # a larger file is no note to read whole; search it instead


@dataclass(frozen=True)
class KbFile:
    """An indexed file: the path results show (`notes/a.md`) and where it is on disk."""

    display_path: str
    path: str


KbFiles = Callable[["ChatService"], Sequence[KbFile]]


def register_resources(
    server: MCPServer,
    service: Callable[[], Awaitable[ChatService]],
    kb_files: KbFiles | None = None,
) -> None:
    """Add the two templates; `kb_files` lists the indexed files (default: the knowledge
    base's own list; tests pass a fake)."""
    listed = kb_files or indexed_kb_files

    @server.resource(
        DOCS_TEMPLATE,
        name="installed_api_page",
        description="An installed package's API page (signature and docstring) at the "
        "version the server has, as `search_docs` results cite it "
        "(`package:symbol@version`). Untrusted quoted text.",
        mime_type="text/plain",
    )
    async def docs_page(package: str, version: str, symbol: str) -> str:
        return api_page(await service(), package, version, symbol)

    @server.resource(
        KB_TEMPLATE,
        name="knowledge_base_file",
        description="A knowledge-base file's text by the path its results show; `start` and "
        "`end` (1-based, inclusive) read only those lines. Only indexed files.",
        mime_type="text/plain",
    )
    async def kb_file(path: str, start: int | None = None, end: int | None = None) -> str:
        chat = await service()
        files = await asyncio.to_thread(listed, chat)
        return await asyncio.to_thread(read_kb_file, files, path, start, end)


def api_page(chat: ChatService, package: str, version: str, symbol: str) -> str:
    """The page of `symbol` in `package` at `version`, as the installed docs index it."""
    source: Any = chat.deps.sources.get("installed_docs")
    if source is None or not hasattr(source, "api_pages"):
        raise ResourceNotFoundError("installed_docs is not enabled on this server")
    if not source.installed_versions():
        raise ResourceNotFoundError(
            "the installed docs index is not loaded yet; call search_docs first"
        )
    pages = [p for p in source.api_pages([symbol]) if _package_of(p) == package]
    for page in pages:
        if page.get("reference") == f"{package}:{symbol}@{version}":
            return _page_text(page)
    if pages:
        other = str(pages[0].get("reference", "")).rpartition("@")[2]
        raise ResourceNotFoundError(
            f"{symbol} is documented here at {package} {other}, not {version}: "
            f"read {docs_uri(package, other, symbol)}"
        )
    raise ResourceNotFoundError(f"no API page for {symbol} in {package} on this server")


def _package_of(page: dict[str, Any]) -> str:
    return str(page.get("reference", "")).partition(":")[0]


def _page_text(page: dict[str, Any]) -> str:
    lines = [str(page.get("title", "")), f"reference: {page.get('reference', '')}"]
    if url := page.get("url"):
        lines.append(f"url: {url}")
    if licence := page.get("attribution"):
        lines.append(f"licence: {licence}")
    return "\n".join([*lines, "", str(page.get("snippet", ""))]).rstrip() + "\n"


def indexed_kb_files(chat: ChatService) -> list[KbFile]:
    """The knowledge base's indexed files (a not-found error when it is off or empty)."""
    source = chat.deps.sources.get("knowledge_base")
    if source is None:
        raise ResourceNotFoundError("knowledge_base is not enabled on this server")
    status = source.status()
    if not status.usable:
        raise ResourceNotFoundError(f"knowledge_base: {status.reason or status.state}")
    from codeweaver.kb.store import KnowledgeBase

    listed = KnowledgeBase(chat.deps.settings).list_files()
    return [KbFile(f.display_path, f.path) for f in listed]


def read_kb_file(
    files: Sequence[KbFile], display_path: str, start: int | None, end: int | None
) -> str:
    """The text of the indexed file shown as `display_path`, or lines `start`-`end`."""
    found = next((f for f in files if f.display_path == display_path), None)
    if found is None:
        raise ResourceNotFoundError(f"no indexed knowledge-base file {display_path}")
    path = Path(found.path)
    # Indexed paths are stored resolved; one that now resolves elsewhere (a symlink put in
    # its place) is not the file that was indexed.
    if not path.is_absolute() or path.resolve() != path or not path.is_file():
        raise ResourceNotFoundError(f"{display_path} is no longer where it was indexed")
    if path.stat().st_size > MAX_KB_BYTES:
        raise ResourceError(f"{display_path} is over {MAX_KB_BYTES:,} bytes; search it instead")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ResourceError(
            f"{display_path} is not a text file; its indexed text is in search results"
        ) from None
    if start is None and end is None:
        return text
    lines = text.splitlines(keepends=True)
    first = start or 1
    last = end or len(lines)
    if first < 1 or last < first or first > len(lines):
        raise ResourceError(f"no lines {first}-{last} in {display_path} ({len(lines)} lines)")
    return "".join(lines[first - 1 : last])
