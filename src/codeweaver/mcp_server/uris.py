"""The `codeweaver://` URIs of what a citation points to, readable as MCP resources.

Built with the SDK's RFC 6570 templates, so a name with spaces or slashes is encoded the
way the server's matching decodes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.shared.uri_template import UriTemplate

DOCS_TEMPLATE = "codeweaver://docs/{package}/{version}/{symbol}"
# `+`: a path keeps its slashes; the optional query reads a range of lines.
KB_TEMPLATE = "codeweaver://kb/{+path}{?start,end}"

_DOCS = UriTemplate.parse(DOCS_TEMPLATE)
_KB = UriTemplate.parse(KB_TEMPLATE)


def docs_uri(package: str, version: str, symbol: str) -> str:
    return _DOCS.expand({"package": package, "version": version, "symbol": symbol})


def kb_uri(path: str) -> str:
    return _KB.expand({"path": path})


def resource_uri(result: Mapping[str, Any]) -> str | None:
    """The resource a result (or an answer's source) can be read as, else None: an
    installed API page (`pandas:pandas.concat@2.1.0`) or a knowledge-base file
    (`kb:notes/a.md#3`)."""
    source = result.get("source")
    reference = str(result.get("reference") or "")
    if source == "installed_docs":
        package, _, rest = reference.partition(":")
        symbol, at, version = rest.rpartition("@")
        # A language topic (`topic:for`) is no API the index can look up by name.
        if package and at and symbol and version and not symbol.startswith("topic:"):
            return docs_uri(package, version, symbol)
    elif source == "knowledge_base" and reference.startswith("kb:"):
        path, _, _ = reference[3:].rpartition("#")
        if path:
            return kb_uri(path)
    return None
