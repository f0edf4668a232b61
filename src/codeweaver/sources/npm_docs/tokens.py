"""Tokens of npm doc entries and of questions for the BM25 index.

The word tools are the installed docs' (`codeweaver.words`: the doc-search word pattern,
stopwords and plural stemmer), so both indexes read words alike: an identifier is split on
`.`, `_` and camelCase (`removeAllListeners` -> `remove`, `all`, `listener`) and also kept
whole (`removealllisteners`). API names also keep their unstemmed words and their
stopwords (`on`, `off`, `once` are method names), so an exact name beats a near one.
Documents: the leaf name's words `NAME_BOOST` times, the qualified name and its dotted
suffixes (`eventemitter.once`), the package's name, then signature and text. Queries: the
plain words (whose idf sets the score's half point, see `index.normalise_score`) and the
expansions, which only add: whole names, unstemmed forms, stopwords, dotted pairs of
adjacent words (`emitter once` -> `emitter.once`) and hyphenated package names.

A light verb opening the question's task (`LIGHT_VERBS`: "How do I *make* a nanoid with a
custom alphabet?") is an expansion, not a plain word: its meaning lies in its object, and
in a project's small index it is a word no entry holds, which counts as the rarest of all
(it was 70 % of that question's idf mass, sinking `customAlphabet` to 0.48 under the 0.5
bar while "nanoid custom alphabet" scored 0.75). It still adds where an entry holds it.
"""

from __future__ import annotations

import itertools
import re

from codeweaver.sources.index_files import doc_words
from codeweaver.sources.npm_docs.model import OVERVIEW, SECTION, NpmEntry
from codeweaver.words import doc_search_stopwords
from codeweaver.words.patterns import DOC_SEARCH_WORD

NAME_BOOST = 3
#: Words every JavaScript question and doc carries.
STOPWORDS = doc_search_stopwords() | {"javascript", "typescript", "js", "ts", "npm"}
_PACKAGE_PART = re.compile(r"[a-z0-9]+")
#: Verbs whose object says what the task is ("make a nanoid", "create a token", "get the
#: version", "use a custom alphabet"): the opening one is no plain word of the query.
LIGHT_VERBS = frozenset({"make", "create", "get", "use"})


def words(text: str, *, names: bool = False, wholes: bool = True) -> list[str]:
    """`index_files.doc_words` with the JavaScript stopwords."""
    return doc_words(text, STOPWORDS, names=names, wholes=wholes)


def package_tokens(name: str) -> list[str]:
    """`@tanstack/react-query` -> itself, `react-query` and its words."""
    low = name.lower()
    bare = low.rsplit("/", 1)[-1]
    parts = [p for p in _PACKAGE_PART.findall(bare) if len(p) > 1 and p not in STOPWORDS]
    return list(dict.fromkeys([low, bare, *parts]))


def _name_tokens(name: str) -> list[str]:
    """`EventEmitter.once` -> `eventemitter.once` plus its words."""
    parts = name.lower().split(".")
    return [".".join(parts[i:]) for i in range(len(parts) - 1)] + words(name, names=True)


def entry_tokens(entry: NpmEntry) -> list[str]:
    """Document tokens: boosted name, package, signature and text."""
    if entry.kind == OVERVIEW:
        tokens = package_tokens(entry.package) * NAME_BOOST
    elif entry.kind == SECTION:
        tokens = words(entry.name) * 2 + package_tokens(entry.package)
    else:
        leaf = entry.name.rpartition(".")[2]
        tokens = words(leaf, names=True) * NAME_BOOST + _name_tokens(entry.name)
        tokens += package_tokens(entry.package)
    return tokens + words(entry.signature) + words(entry.doc)


def query_tokens(query: str) -> tuple[list[str], list[str]]:
    """(plain words, expansions) of a question, each without repeats."""
    plain = list(dict.fromkeys(words(query, wholes=False)))
    expansions = words(query, names=True)
    if len(plain) > 1 and plain[0] in LIGHT_VERBS:
        expansions.append(plain.pop(0))
    low = [w.lower() for w in DOC_SEARCH_WORD.findall(query)]
    for first, second in itertools.pairwise(low):
        if first not in STOPWORDS and second not in STOPWORDS:
            expansions.append(f"{first}.{second}")
    # A package named with its hyphens ("react-query") is one token of the documents.
    # Names are tried from a word's first letter only, and one is at most 214 characters:
    # from every letter of a long word, a try would rescan the rest of it.
    expansions += re.findall(
        r"@?(?<![a-z0-9])[a-z0-9][\w.~-]{0,213}/[\w.~-]+|(?<![a-z0-9])[a-z0-9]+(?:-[a-z0-9]+)+",
        query.lower(),
    )
    extra = [t for t in dict.fromkeys(expansions) if t not in plain]
    return plain, extra
