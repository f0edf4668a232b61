"""Pure helpers of the GitHub source: query building, languages, fragments."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from codeweaver.sources.query_shapes import MAX_QUERY_CHARS, code_terms, cut_words, is_latin
from codeweaver.sources.so_format import TECH_TAGS

MAX_TERMS = 3
MAX_SNIPPET_CHARS = 1500
FRAGMENT_SEPARATOR = "\n…\n"

# Language names in questions → GitHub `language:` values (Linguist names or aliases).
# "go" and "c" are too ambiguous in English to count.
QUESTION_LANGUAGES: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "java": "java",
    "kotlin": "kotlin",
    "scala": "scala",
    "golang": "go",
    "rust": "rust",
    "ruby": "ruby",
    "php": "php",
    "swift": "swift",
    "c#": "csharp",
    "csharp": "csharp",
    "c++": "cpp",
    "cpp": "cpp",
    "bash": "shell",
    "shell": "shell",
    "sql": "sql",
    "dart": "dart",
    "elixir": "elixir",
    "haskell": "haskell",
    "lua": "lua",
    "perl": "perl",
}

# Libraries and frameworks whose code is written in one language: a question naming only
# the library ("pandas를 써서 …") still gets its `language:`.
LIBRARY_LANGUAGES: dict[str, str] = {
    "pandas": "python",
    "numpy": "python",
    "django": "python",
    "flask": "python",
    "fastapi": "python",
    "pydantic": "python",
    "pytest": "python",
    "sqlalchemy": "python",
    "asyncio": "python",
    "matplotlib": "python",
    "pytorch": "python",
    "tensorflow": "python",
    "langchain": "python",
    "langgraph": "python",
    "react": "javascript",
    "reactjs": "javascript",
    "node.js": "javascript",
    "nodejs": "javascript",
    "jquery": "javascript",
    "vue": "javascript",
    "angular": "typescript",
    "rails": "ruby",
    "laravel": "php",
    "spring boot": "java",
}

# File extension → language shown in the snippet header.
EXTENSION_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".kt": "kotlin",
    ".scala": "scala",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".cs": "c#",
    ".c": "c",
    ".h": "c",
    ".cc": "c++",
    ".cpp": "c++",
    ".hpp": "c++",
    ".sh": "shell",
    ".bash": "shell",
    ".sql": "sql",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".hs": "haskell",
    ".lua": "lua",
    ".pl": "perl",
    ".html": "html",
    ".css": "css",
    ".md": "markdown",
    ".rst": "restructuredtext",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
}
FILENAME_LANGUAGES = {"dockerfile": "dockerfile", "makefile": "makefile"}

_LANGUAGE_PATTERNS = [
    # Latin letters only: a Korean particle ("python에서") must not hide the name.
    (re.compile(r"(?<![A-Za-z0-9_.#+-])" + re.escape(word) + r"(?![A-Za-z0-9_#+-])"), language)
    for word, language in QUESTION_LANGUAGES.items()
]
_LIBRARY_PATTERNS = [
    (re.compile(r"(?<![A-Za-z0-9_.#+-])" + re.escape(word) + r"(?![A-Za-z0-9_#+-])"), language)
    for word, language in LIBRARY_LANGUAGES.items()
]


def question_language(text: str) -> str | None:
    """The GitHub `language:` value of the first language `text` names, else of the first
    single-language library it names, else None."""
    lowered = text.lower()
    for patterns in (_LANGUAGE_PATTERNS, _LIBRARY_PATTERNS):
        found = [(m.start(), lang) for p, lang in patterns if (m := p.search(lowered))]
        if found:
            return min(found)[1]
    return None


# A lone capitalised name (`TypeError`, `StdClass`): no dot, underscore or call to narrow it.
_TOO_COMMON = re.compile(r"^[A-Z][A-Za-z0-9]*$")


# Language and library names are what a question is about, not code to search for.
_TECH_NAMES = frozenset(QUESTION_LANGUAGES) | frozenset(LIBRARY_LANGUAGES) | frozenset(TECH_TAGS)


def build_query(text: str) -> str:
    """The `q` of a code search: the identifiers, API names and error names `text` mentions,
    plus `language:`; "" when it mentions none (prose words match any file: no search).

    Code search requires every term, so at most `MAX_TERMS` are sent."""
    if not is_latin(text):
        return ""
    terms = [t for t in code_terms(text, limit=2 * MAX_TERMS) if t.lower() not in _TECH_NAMES]
    terms = terms[:MAX_TERMS]
    if len(terms) == 1 and _TOO_COMMON.match(terms[0]):
        return ""  # `TypeError` or `StdClass` alone matches too many files to mean anything
    if not terms:
        return ""
    language = question_language(text)
    query = " ".join(terms + ([f"language:{language}"] if language else []))
    return cut_words(query, MAX_QUERY_CHARS)


def path_language(path: str) -> str:
    name = PurePosixPath(path).name.lower()
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    return EXTENSION_LANGUAGES.get(PurePosixPath(name).suffix, "text")


def fragments(item: dict[str, Any]) -> str:
    """The item's content fragments (path matches only when there are none), joined."""
    matches = [m for m in item.get("text_matches") or [] if isinstance(m, dict)]
    content = [m for m in matches if m.get("property") == "content"] or matches
    texts: list[str] = []
    for match in content:
        fragment = str(match.get("fragment") or "").strip("\n").rstrip()
        if fragment and fragment not in texts:
            texts.append(fragment)
    joined = FRAGMENT_SEPARATOR.join(texts)
    return joined if len(joined) <= MAX_SNIPPET_CHARS else joined[:MAX_SNIPPET_CHARS] + "…"
