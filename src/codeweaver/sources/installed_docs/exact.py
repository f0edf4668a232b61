"""Names a question spells out: API identifiers and the packages it is about.

Identifiers (`query_names`):
  * *strong*: dotted names (`os.walk`, `df.duplicated`), calls (`strip()`), snake_case
    (`read_csv`), inner-capital CamelCase (`DataFrame`), words in backticks, and plain words
    no English text uses but APIs do (`strftime`, `isinstance`: a word is such a name when it
    is a documented leaf name and not in the small English vocabulary of `_ENGLISH_HINT`);
  * *weak*: plain words that are also API names (`zip`, `sort`, `splitting` -> `split`):
    they only match builtins, top-level stdlib functions and classes, and the packages the
    question names, never a method deep in some other package.
Leaf names (`leaf_named`): whether the question spells an entry's leaf name in some form
(`sorting` -> `sort`, `string` -> `str`), a feature of the score.
Packages (`mentioned_packages`): words naming a top-level module of the index (`pandas`,
`numpy`, `datetime`) or a known synonym (`dataframe` -> pandas, `beautifulsoup` -> bs4),
and known packages that are not installed (`django`, `selenium`): the docs cannot answer
those, so nothing from another package should pretend to.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass

from codeweaver.sources.installed_docs.tokenizer import QUERY_SYNONYMS, STOPWORDS, stem
from codeweaver.sources.languages import named_language

logger = logging.getLogger(__name__)

STRONG = 2
WEAK = 1

#: Question words for a package, beyond its own module name.
PACKAGE_SYNONYMS = {
    "dataframe": "pandas", "dataframes": "pandas", "beautifulsoup": "bs4",
    "beautiful soup": "bs4", "numpy array": "numpy", "pillow": "PIL", "regex": "re",
    "regular expression": "re", "urllib2": "urllib", "httplib": "http", "cpickle": "pickle",
    "configparser": "configparser", "sqlite": "sqlite3", "yaml": "yaml",
}  # fmt: skip
#: Well-known packages: a question naming one that is not installed is not for these docs.
KNOWN_PACKAGES = frozenset(
    {"django", "selenium", "flask", "matplotlib", "scipy", "sqlalchemy", "tensorflow",
     "keras", "sklearn", "scikit", "pygame", "opencv", "cv2", "scrapy", "boto", "boto3",
     "pyqt", "pyqt4", "pyqt5", "wxpython", "pymongo", "mysqldb", "psycopg2", "seaborn",
     "tornado", "twisted", "gtk", "kivy", "nltk", "pyspark", "spark", "theano", "torch",
     "pytorch", "openpyxl", "xlrd", "xlwt", "sympy", "networkx", "plotly", "bokeh", "jinja",
     "pyserial", "paramiko", "celery", "redis", "mongodb", "mysql", "postgresql", "tkinter",
     "pyramid", "web2py", "gevent", "cython", "ipython", "jupyter", "pyplot"}
)  # fmt: skip
#: Stdlib module names that are everyday English words: naming them says nothing.
_COMMON_WORDS = frozenset(
    {"string", "time", "random", "copy", "array", "select", "queue", "types", "code", "test",
     "token", "site", "signal", "locale", "operator", "numbers", "math", "glob", "this",
     "file", "io", "parser", "symbol", "keyword", "calendar", "platform", "secrets",
     "statistics", "email", "html", "http", "enum", "abc", "dis", "cmd", "shelve", "wave",
     "turtle", "mailbox", "resource"}
)  # fmt: skip
#: Plain words too generic to count even as weak names.
_GENERIC = frozenset(
    {"list", "lists", "dict", "type", "object", "value", "values", "key", "keys", "item",
     "items", "name", "names", "file", "files", "data", "line", "lines", "number", "numbers",
     "string", "strings", "text", "time", "date", "error", "path", "element", "elements",
     "array", "column", "columns", "row", "rows", "word", "words", "function", "class",
     "method", "module", "variable", "first", "last", "new", "one", "two", "get", "set",
     "make", "create", "use", "using", "find", "check", "convert", "change", "return"}
)  # fmt: skip
#: Words that imply an API they do not spell: reading or writing "a file" is `open()`.
_IMPLIED = {"file": "open", "files": "open"}

_IDENT = re.compile(r"`([^`\s]+)`|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


@dataclass(frozen=True)
class QueryName:
    """An identifier of the question: `leaf` to match, `qualified` when it was dotted."""

    leaf: str
    strength: int  # STRONG or WEAK
    qualified: str = ""
    root: str = ""  # first component of a dotted name (`df`, `os`)


def _forms(word: str) -> list[str]:
    """The word and its bare forms (`splitting` -> `split`, `sorts` -> `sort`)."""
    forms = [word]
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        forms += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            forms.append(stem[:-1])
    if word.endswith("ed") and len(word) > 4:
        forms += [word[:-2], word[:-1]]
    if word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
        forms.append(word[:-1])
    return forms


@functools.cache
def english_words() -> frozenset[str]:
    """Whole lowercase words of the MiniLM (BERT uncased) vocabulary; empty if unavailable,
    and then every plain word counts as English (weak)."""
    try:
        from codeweaver.embeddings.minilm import model_dir

        vocab = json.loads((model_dir() / "tokenizer.json").read_text(encoding="utf-8"))
        return frozenset(w for w in vocab["model"]["vocab"] if w.isalpha() and w.islower())
    except Exception as exc:  # no weights installed: fall back to weak plain words
        logger.info("no English vocabulary for exact names: %s", exc)
        return frozenset()


def query_names(
    query: str,
    leaves: frozenset[str],
    *,
    folded: dict[str, str] | None = None,
    packages: frozenset[str] = frozenset(),
    english: frozenset[str] | None = None,
) -> list[QueryName]:
    """Identifiers of `query` that are documented leaf names (`leaves`), strongest first.

    `folded` maps lowercased leaves to leaves (CamelCase typed in another case); `packages`
    are top-level module names, never taken for API names; `english` is the vocabulary
    telling prose from API words (default: `english_words()`).
    """
    vocabulary = english_words() if english is None else english
    found: dict[str, QueryName] = {}
    words = set(re.findall(r"[a-z]+", query.lower()))

    def keep(name: QueryName) -> None:
        old = found.get(name.leaf)
        if old is None or (name.strength, bool(name.qualified)) > (
            old.strength,
            bool(old.qualified),
        ):
            found[name.leaf] = name

    for quoted, word, call in _IDENT.findall(query):
        text = (quoted or word).strip(".()")
        if not text or text.replace(".", "").isdigit():
            continue
        if "." in text:
            parts = text.split(".")
            if parts[-1] in leaves and len(parts[-1]) > 1:
                keep(QueryName(parts[-1], STRONG, text, parts[0]))
            continue
        low = text.lower()
        if low in packages or text in packages:
            continue
        camel = bool(_CAMEL.search(text))
        if quoted or call or "_" in text.strip("_") or camel:
            leaf = text if text in leaves else (folded or {}).get(low) if camel else None
            if leaf and len(leaf) > 1:
                keep(QueryName(leaf, STRONG))
            continue
        if low in _GENERIC or low in STOPWORDS:
            continue
        forms = _forms(low)
        # English in any form (`duplicated` is English because `duplicate` is).
        english_word = not vocabulary or any(f in vocabulary for f in forms)
        for form in forms:
            if form in leaves and len(form) > 2:
                keep(QueryName(form, WEAK if english_word else STRONG))
                break
    for word, implied in _IMPLIED.items():
        if word in words and implied not in found and implied in leaves:
            keep(QueryName(implied, WEAK))
    return sorted(found.values(), key=lambda n: -n.strength)


def question_words(query: str) -> frozenset[str]:
    """Lowercased words of the question with their bare forms, plural stems and API
    abbreviations (`strings` -> `string`, `str`): what `leaf_named` matches."""
    out: set[str] = set()
    for word in re.findall(r"[a-z0-9_]+", query.lower()):
        out.update(_forms(word))
        out.add(stem(word))
        out.update(QUERY_SYNONYMS.get(word, ()))
    return frozenset(out)


def leaf_named(leaf: str, words: frozenset[str]) -> float:
    """1 when `words` (`question_words`) hold the leaf name, 0.5 when one of 4+ letters
    starts it or it starts one (`sort` ~ `sorted`, `find` ~ `findall`), else 0."""
    low = leaf.lower()
    if low in words:
        return 1.0
    if len(low) >= 3 and any(
        len(w) >= 4 and (low.startswith(w) or w.startswith(low)) for w in words
    ):
        return 0.5
    return 0.0


def mentioned_packages(query: str, tops: frozenset[str]) -> tuple[frozenset[str], bool]:
    """(top-level modules of the index the question names, names a package not installed)."""
    low = query.lower()
    words = set(re.findall(r"[a-z_][a-z0-9_]*", low))
    named = {t for t in tops if t.lower() in words and t.lower() not in _COMMON_WORDS}
    named |= {top for phrase, top in PACKAGE_SYNONYMS.items() if phrase in low and top in tops}
    missing = any(w in KNOWN_PACKAGES and w not in tops for w in words)
    return frozenset(named), missing and not named


def other_language(query: str, tops: frozenset[str]) -> str | None:
    """The language or platform other than Python the question is about, if it names one
    and names neither Python nor an installed Python package; such a question gets no
    installed Python docs (on StackEval's sample they reached Kotlin, SQL and C# answers)."""
    found = named_language(query)
    if found is None:
        return None
    named, _missing = mentioned_packages(query, tops)
    return None if named else found
