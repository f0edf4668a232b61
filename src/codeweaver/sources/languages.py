"""Which programming language a code file is written in, by its extension.

A question that names a language other than Python ("Rust에서 … move 에러") is answered from
code in that language: the lines of a Python file that share its words ("value", "type",
"trait") are incidental matches. Files whose extension belongs to no language here
(Markdown, TOML, plain text) are kept for every question.
"""

from __future__ import annotations

import re
from pathlib import Path

# Language (or platform) as a question names it, lower case → its source file extensions.
_FAMILIES: dict[tuple[str, ...], frozenset[str]] = {
    ("python",): frozenset({".py", ".pyi", ".pyx", ".ipynb"}),
    ("java", "spring", "gradle", "maven", "jvm"): frozenset({".java"}),
    ("kotlin", "kotlinx", "android"): frozenset({".kt", ".kts", ".java"}),
    ("c#", "csharp", ".net", "dotnet", "asp.net"): frozenset({".cs", ".cshtml", ".razor"}),
    ("c++",): frozenset({".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h"}),
    ("golang",): frozenset({".go"}),
    ("rust",): frozenset({".rs"}),
    ("php", "laravel"): frozenset({".php"}),
    (
        "javascript", "typescript", "nodejs", "node.js", "npm", "reactjs", "react.js",
        "angular", "vue", "vuejs", "svelte", "jquery", "jest", "webpack",
    ): frozenset({".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".vue", ".svelte"}),
    ("swift", "swiftui", "xcode"): frozenset({".swift", ".m", ".h"}),
    ("objective-c",): frozenset({".m", ".mm", ".h"}),
    ("ruby", "rails"): frozenset({".rb", ".erb"}),
    ("perl",): frozenset({".pl", ".pm"}),
    ("bash", "zsh"): frozenset({".sh", ".bash", ".zsh"}),
    ("powershell",): frozenset({".ps1", ".psm1"}),
    ("mysql", "postgres", "postgresql", "plpgsql", "t-sql"): frozenset({".sql"}),
    ("haskell",): frozenset({".hs"}),
    ("elixir",): frozenset({".ex", ".exs"}),
    ("erlang",): frozenset({".erl", ".hrl"}),
    ("scala",): frozenset({".scala", ".sc"}),
    ("clojure",): frozenset({".clj", ".cljs", ".cljc"}),
    ("lua",): frozenset({".lua"}),
    ("dart", "flutter"): frozenset({".dart"}),
    ("vba",): frozenset({".bas", ".vba", ".cls"}),
}  # fmt: skip
EXTENSIONS: dict[str, frozenset[str]] = {
    name: extensions for names, extensions in _FAMILIES.items() for name in names
}
_KNOWN = frozenset().union(*_FAMILIES.values())

# Longest first, so "vuejs" is tried before "vue". Only unambiguous names are listed above:
# "shell", "node" or "react" are also plain words of Python questions.
_OTHER_LANGUAGE = re.compile(
    r"(?<![A-Za-z0-9_.#+-])(?:"
    + "|".join(re.escape(n) for n in sorted(EXTENSIONS.keys() - {"python"}, key=len, reverse=True))
    + r")(?![A-Za-z0-9_#+-])",  # a Korean particle may follow: "Rust에서"
    re.IGNORECASE,
)
_PYTHON = re.compile(
    r"(?<![A-Za-z0-9_.])(?:python3?|py|pip|cpython|pypi|django|flask|fastapi|pandas|numpy|"
    r"scipy|matplotlib|sqlalchemy|selenium|tkinter|pyqt5?|jupyter|psycopg2?|pytest|파이썬)"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)


def named_language(text: str) -> str | None:
    """The language or platform other than Python that `text` names, as spelled there,
    when it names no Python."""
    found = _OTHER_LANGUAGE.search(text)
    if found is None or _PYTHON.search(text):
        return None
    return found.group(0)


def foreign_code(question: str) -> frozenset[str]:
    """Extensions of code files that cannot answer `question`: when it names a language
    other than Python (and no Python), every known extension that language does not use;
    otherwise none."""
    language = named_language(question)
    own = EXTENSIONS.get(language.lower()) if language else None
    return _KNOWN - own if own is not None else frozenset()


def is_foreign(path: Path, foreign: frozenset[str]) -> bool:
    return path.suffix.lower() in foreign
