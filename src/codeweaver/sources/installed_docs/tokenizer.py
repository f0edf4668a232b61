"""Tokens of doc entries and queries for the BM25 index.

Tokenisation (`tokenize`, the same for documents and queries, kept deliberately simple):
  * words are runs of letters/digits/underscores, optionally dotted (`os.path.join`),
    lowercased; a dotted or underscored word is kept whole *and* split on `.`, `_` and
    camelCase (`TextIOBase` -> `text`, `io`, `base`); glued names made of two words of a short
    API vocabulary are split too (`readline` -> `read`, `line`; `listdir` -> `list`, `dir`);
  * English stopwords (bm25s' `STOPWORDS_EN_PLUS` minus "re", plus "python", "please"...)
    and one-letter tokens are dropped;
  * an S-stemmer folds plurals (`lines` -> `line`, `entries` -> `entry`); name and query
    tokens also keep the unstemmed form, so an exact name (`loads`) beats a near one (`load`).
Documents (`entry_tokens`): the leaf name's tokens repeated `NAME_BOOST` times, the qualified
name and its dotted suffixes (`io.iobase.readline`, `iobase.readline`), aliases, the
distribution name, the signature and the docstring. Keyword topics (`for`, `with`) also get an
`@for` token. Queries (`query_tokens`) add dotted pairs of adjacent words (`json loads` ->
`json.loads`), a few abbreviations (`directory` -> `dir`, `string` -> `str`) and `@for` when a
keyword is used as one (`for loop`, `with statement`).
"""

from __future__ import annotations

import itertools
import keyword
import re

from codeweaver.sources.installed_docs.model import DocEntry
from codeweaver.words import doc_search_stopwords, stem_for_doc_search
from codeweaver.words.patterns import DOC_SEARCH_PIECE, DOC_SEARCH_WORD

NAME_BOOST = 3

# This index's stopwords and stemmer live with the other word tools (`codeweaver.words`);
# named here for `exact` too, which must drop and fold words exactly as the index does.
STOPWORDS = doc_search_stopwords()
stem = stem_for_doc_search
#: Python keywords: `@for` tokens tie "for loop" to the `for` language topic.
_KEYWORDS = frozenset(keyword.kwlist)
_KEYWORD_NOUNS = frozenset({"loop", "statement", "keyword", "clause", "block", "expression"})
#: Words that glued API names are made of: `readline` = read+line, `listdir` = list+dir.
_GLUE_PARTS = frozenset(
    {"read", "write", "get", "set", "is", "has", "iter", "load", "dump", "make", "open", "close",
     "split", "join", "find", "start", "starts", "end", "ends", "add", "remove", "new", "list",
     "copy", "parse", "send", "recv", "file", "files", "path", "base", "dir", "dirs", "to",
     "from", "line", "lines", "name", "names", "with", "attr", "items", "item", "size", "keys",
     "key", "values", "value", "all", "time", "append", "extend", "pop", "left", "right",
     "insert", "sort", "count", "index", "exists", "link", "user", "home", "temp", "abs",
     "real", "norm", "case", "upper", "lower", "strip", "str", "int", "bytes", "walk", "dict",
     "cwd", "instance", "subclass", "expand", "ext", "iso", "format", "update", "default",
     "group", "match", "full", "char", "mode", "type", "object", "data", "text"}
)  # fmt: skip
#: Query words that also stand for a common API abbreviation.
QUERY_SYNONYMS = {
    "directory": ("dir",), "directories": ("dir",), "folder": ("dir", "directory"),
    "folders": ("dir", "directory"), "string": ("str",), "strings": ("str",),
    "integer": ("int",), "integers": ("int",), "dictionary": ("dict",),
    "dictionaries": ("dict",), "regex": ("re",), "regular": ("re",), "length": ("len",),
    "boolean": ("bool",), "arguments": ("args",), "temporary": ("temp", "tmp"),
}  # fmt: skip


def _unglue(word: str) -> list[str]:
    """Split a lowercased glued name in two when both halves are `_GLUE_PARTS` words."""
    for cut in range(2, len(word) - 1):
        if word[:cut] in _GLUE_PARTS and word[cut:] in _GLUE_PARTS:
            return [word[:cut], word[cut:]]
    return []


def _pieces(word: str) -> list[str]:
    """Lowercased sub-words of one identifier (or plain word)."""
    pieces: list[str] = []
    for part in re.split(r"[._]+", word):
        for piece in DOC_SEARCH_PIECE.findall(part):
            low = piece.lower()
            pieces.append(low)
            pieces += _unglue(low)
    return pieces


def tokenize(text: str, *, keep_unstemmed: bool = False) -> list[str]:
    """Tokens of free text (see the module docstring)."""
    tokens: list[str] = []
    for word in DOC_SEARCH_WORD.findall(text):
        low = word.lower()
        if ("." in low or "_" in low.strip("_")) and len(low) > 2:
            tokens.append(low.strip("._"))
        for piece in _pieces(word):
            if len(piece) < 2 or piece in STOPWORDS:
                continue
            stemmed = stem_for_doc_search(piece)
            tokens.append(stemmed)
            if keep_unstemmed and stemmed != piece:
                tokens.append(piece)
    return tokens


def query_tokens(query: str) -> list[str]:
    """Unique query tokens, in order: stemmed and unstemmed forms, dotted pairs of adjacent
    words (`json loads` -> `json.loads`, matching qualified names), and `@for`-style tokens
    for Python keywords used as such (`for loop`, `with statement`, `yield keyword`)."""
    words = [w.lower() for w in DOC_SEARCH_WORD.findall(query)]
    tokens = tokenize(query, keep_unstemmed=True)
    tokens += [syn for word in words for syn in QUERY_SYNONYMS.get(word, ())]
    for first, second in itertools.pairwise(words):
        if first in _KEYWORDS and stem_for_doc_search(second) in _KEYWORD_NOUNS:
            tokens.append("@" + first)
        elif second in _KEYWORDS and first == "keyword":
            tokens.append("@" + second)
        elif first not in STOPWORDS and second not in STOPWORDS:
            tokens.append(f"{first}.{second}")
    if len(words) == 1 and words[0] in _KEYWORDS:
        tokens.append("@" + words[0])
    return list(dict.fromkeys(tokens))


def _name_tokens(name: str) -> list[str]:
    """`io.IOBase.readline` -> its words plus `io.iobase.readline` and `iobase.readline`."""
    parts = name.lower().split(".")
    return [".".join(parts[i:]) for i in range(len(parts) - 1)] + tokenize(
        name, keep_unstemmed=True
    )


def entry_tokens(entry: DocEntry) -> list[str]:
    """Document tokens: boosted names + signature + docstring."""
    if entry.kind == "topic":
        label = entry.name.replace("-", " ")
        tokens = tokenize(label, keep_unstemmed=True) * NAME_BOOST
        if entry.name in _KEYWORDS:
            tokens += ["@" + entry.name] * NAME_BOOST
    else:
        leaf = entry.name.rpartition(".")[2]
        tokens = tokenize(leaf, keep_unstemmed=True) * NAME_BOOST + _name_tokens(entry.name)
    for alias in entry.aliases:
        tokens += _name_tokens(alias)
    if entry.package != "python":
        tokens.append(entry.package)
    tokens += tokenize(entry.signature)
    tokens += tokenize(entry.doc)
    return tokens
