"""Pure helpers of the GitHub source: query building, languages, fragments, scores."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

MAX_KEYWORDS = 5
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

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each else
    few for from further get gets getting got had has have having he her here hers him his
    how i if in into is it its itself just me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them
    then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours
    best better example examples help instead like make need possible problem properly
    question right simple trying try use used uses using want way ways work working works
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d{3,}")
_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|\d")
_LANGUAGE_PATTERNS = [
    (re.compile(r"(?<![\w.#+-])" + re.escape(word) + r"(?![\w#+-])"), language)
    for word, language in QUESTION_LANGUAGES.items()
]


def question_language(text: str) -> str | None:
    """The GitHub `language:` value of the first language `text` names, if any."""
    lowered = text.lower()
    found = [(m.start(), lang) for p, lang in _LANGUAGE_PATTERNS if (m := p.search(lowered))]
    return min(found)[1] if found else None


def keywords(text: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Up to `limit` search terms: code-like ones (snake_case, camelCase) first."""
    language_words = set(QUESTION_LANGUAGES)
    terms: list[str] = []
    seen: set[str] = set()
    for term in _TERM.findall(text):
        lowered = term.lower()
        if len(term) < 2 or lowered in STOPWORDS or lowered in language_words or lowered in seen:
            continue
        seen.add(lowered)
        terms.append(term)
    code_like = [t for t in terms if _CODE_LIKE.search(t)]
    plain = [t for t in terms if not _CODE_LIKE.search(t)]
    chosen = set((code_like + plain)[:limit])
    return [t for t in terms if t in chosen]  # keep the question's order


def build_query(text: str) -> str:
    """The `q` of a code search for a question, or "" when no keyword is left."""
    terms = keywords(text)
    if not terms:
        return ""
    language = question_language(text)
    return " ".join(terms + ([f"language:{language}"] if language else []))


def path_language(path: str) -> str:
    name = PurePosixPath(path).name.lower()
    if name in FILENAME_LANGUAGES:
        return FILENAME_LANGUAGES[name]
    return EXTENSION_LANGUAGES.get(PurePosixPath(name).suffix, "text")


def licence_of(repository: dict[str, Any]) -> str:
    licence = repository.get("license")
    if isinstance(licence, dict):
        spdx = licence.get("spdx_id")
        if isinstance(spdx, str) and spdx and spdx != "NOASSERTION":
            return spdx
        name = licence.get("name")
        if isinstance(name, str) and name:
            return name
    return "see repository licence"


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


def normalise_scores(raw: list[float | None]) -> list[float | None]:
    """GitHub's scores divided by the page's highest one.

    Code search scores are unbounded and only comparable within one response, so the best
    hit of a page gets 1.0 and the others their share of it. No positive score → None.
    """
    top = max((s for s in raw if s is not None), default=0.0)
    if top <= 0:
        return [None for _ in raw]
    return [None if s is None else min(1.0, max(0.0, s / top)) for s in raw]


def score_value(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
