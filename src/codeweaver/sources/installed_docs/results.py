"""What an installed-docs result looks like: its docs.python.org (or package) URL, its
reference (`package:name@version`), title and snippet."""

from __future__ import annotations

import builtins
import re
import sys
from pathlib import Path

from codeweaver.sources.installed_docs.collect import DocEntry
from codeweaver.sources.installed_docs.licence import attribution
from codeweaver.vocabulary import SearchResult

SOURCE_NAME = "installed_docs"
SNIPPET_CHARS = 1200


# --------------------------------------------------------------------------- URLs


def _docs_base(version: str = "") -> str:
    """docs.python.org for `version` (`3.12.1`: the indexed Python's), else ours."""
    parts = version.split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return f"https://docs.python.org/{parts[0]}.{parts[1]}"
    return f"https://docs.python.org/{sys.version_info.major}.{sys.version_info.minor}"


#: Stdlib packages documented on one page (submodules without a page of their own).
_SINGLE_PAGE = frozenset(
    {"json", "asyncio", "sqlite3", "ctypes", "tomllib", "zoneinfo", "wsgiref", "multiprocessing",
     "concurrent", "email", "http", "importlib", "unittest", "xml", "urllib", "logging", "os",
     "collections", "dbm", "curses", "encodings", "html", "venv", "zipfile"}
)  # fmt: skip
#: Submodules that do have their own page.
_SUBPAGES = frozenset(
    {"os.path", "collections.abc", "concurrent.futures", "email.mime", "email.message",
     "email.parser", "email.policy", "email.utils", "email.headerregistry", "http.client",
     "http.server", "http.cookies", "http.cookiejar", "importlib.metadata",
     "importlib.resources", "unittest.mock", "xml.etree.ElementTree", "xml.dom",
     "xml.dom.minidom", "xml.sax", "urllib.request", "urllib.parse", "urllib.error",
     "urllib.robotparser", "logging.handlers", "logging.config", "multiprocessing.shared_memory",
     "html.parser", "html.entities", "curses.ascii", "curses.panel", "json.tool"}
)  # fmt: skip


def _stdlib_page(module: str) -> str:
    if module in _SUBPAGES:
        return module.lower()
    top = module.split(".")[0]
    return top if top in _SINGLE_PAGE or "." in module else module.lower()


def stdlib_url(module: str, name: str, kind: str, version: str = "") -> str:
    """Best-effort docs.python.org anchor (`library/json.html#json.loads`) of `version`."""
    base = _docs_base(version)
    if module == "builtins":
        rest = name.removeprefix("builtins.")
        if "." in rest:
            return f"{base}/library/stdtypes.html#{rest}"
        obj = getattr(builtins, rest, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return f"{base}/library/exceptions.html#{rest}"
        return f"{base}/library/functions.html#{rest}"
    anchor = f"module-{module}" if kind == "module" else name
    return f"{base}/library/{_stdlib_page(module)}.html#{anchor}"


_TOPIC_PAGES: dict[str, tuple[str, ...]] = {
    "reference/simple_stmts": ("assert", "assignment", "augassign", "break", "continue", "del",
                               "global", "import", "nonlocal", "pass", "raise", "return",
                               "yield"),
    "reference/compound_stmts": ("async", "class", "compound", "else", "for", "function", "if",
                                 "try", "while", "with"),
    "reference/expressions": ("atom-identifiers", "atom-literals", "attribute-references",
                              "await", "binary", "bitwise", "booleans", "calls", "comparisons",
                              "conversions", "dict", "exprlists", "in", "lambda", "lists",
                              "operator-summary", "power", "shifting", "slicings",
                              "subscriptions", "unary"),
    "reference/lexical_analysis": ("floating", "id-classes", "identifiers", "imaginary",
                                   "integers", "numbers", "strings"),
    "reference/datamodel": ("attribute-access", "callable-types", "context-managers",
                            "customization", "numeric-types", "objects", "sequence-types",
                            "specialnames", "types"),
    "reference/executionmodel": ("dynamic-features", "exceptions", "execmodel", "naming"),
    "library/stdtypes": ("bltin-code-objects", "bltin-ellipsis-object", "bltin-null-object",
                         "bltin-type-objects", "specialattrs", "string-methods", "truth",
                         "typesfunctions", "typesmapping", "typesmethods", "typesmodules",
                         "typesseq", "typesseq-mutable"),
    "library/string": ("formatstrings",),
    "library/pdb": ("debugger",),
}  # fmt: skip
_TOPIC_URL = {label: page for page, labels in _TOPIC_PAGES.items() for label in labels}


def topic_url(label: str, version: str = "") -> str:
    """docs.python.org page of a `pydoc_data.topics` label (the docs' search page if unknown)."""
    page = _TOPIC_URL.get(label)
    if page is None:
        return f"{_docs_base(version)}/search.html?q={label}"
    return f"{_docs_base(version)}/{page}.html#{label}"


# --------------------------------------------------------------------------- results


def entry_url(entry: DocEntry) -> str:
    if entry.kind == "topic":
        return topic_url(entry.name, entry.version)
    if entry.package == "python":
        return stdlib_url(entry.module, entry.name, entry.kind, entry.version)
    if entry.home:
        return entry.home
    return Path(entry.path).as_uri() if entry.path else ""


def entry_reference(entry: DocEntry) -> str:
    name = f"topic:{entry.name}" if entry.kind == "topic" else entry.name
    return f"{entry.package}:{name}@{entry.version}"


def entry_title(entry: DocEntry) -> str:
    if entry.kind == "topic":
        return f"{entry.name} (language reference topic) — {entry.display} {entry.version}"
    return f"{entry.name} — {entry.display} {entry.version}"


def make_snippet(entry: DocEntry, limit: int = SNIPPET_CHARS) -> str:
    """Signature, a blank line, then the docstring; cut at a word boundary near `limit`."""
    text = f"{entry.signature}\n\n{entry.doc}".strip() if entry.signature else entry.doc
    text = re.sub(r"\n{3,}", "\n\n", text)
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip() + " …"


def to_result(entry: DocEntry, score: float, licence: str = "") -> SearchResult:
    """`licence`: the entry's package licence, "" when unknown (never None: it would be
    shown as the word "None")."""
    result = SearchResult(
        title=entry_title(entry),
        url=entry_url(entry),
        snippet=make_snippet(entry),
        source=SOURCE_NAME,
        score=score,
        date=None,
        reference=entry_reference(entry),
        attribution=attribution(licence),
    )
    if entry.kind != "topic":
        result["api"], result["api_kind"] = entry.name, entry.kind
    return result
