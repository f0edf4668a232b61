"""Word sets that mark something rather than being dropped: negations, technologies,
synonyms. The cache verifier and the grounding check share them (through `compare`)."""

from __future__ import annotations

#: Words that negate: a question or claim with one on one side only says something else.
NEGATION = frozenset(
    {
        "not",
        "no",
        "without",
        "never",
        "except",
        "exclude",
        "excluding",
        "ignore",
        "ignoring",
        "cannot",
        "cant",
        "dont",
        "doesnt",
        "isnt",
    }
)

#: Languages, libraries and platforms: two questions naming different ones differ. The
#: cache check's stemmer leaves them as they are.
TECHNOLOGIES = frozenset(
    """python python2 python3 java javascript typescript node nodejs react vue angular
    django flask fastapi spring kotlin swift rust go golang ruby rails php perl c c++ c#
    csharp scala haskell bash shell powershell sql mysql postgresql postgres sqlite
    mongodb redis pandas numpy scipy tensorflow pytorch keras matplotlib docker
    kubernetes git linux ubuntu windows macos android ios excel jquery""".split()
)

#: Words the cache check's stemmer folds together before stemming (dict/dictionary,
#: int/integer, df/dataframe, …).
COMPARE_SYNONYMS = {
    "dictionary": "dict",
    "dictionaries": "dict",
    "dicts": "dict",
    "integer": "int",
    "integers": "int",
    "ints": "int",
    "string": "str",
    "strings": "str",
    "strs": "str",
    "dataframe": "df",
    "dataframes": "df",
    "data": "data",
    "array": "array",
    "arrays": "array",
    "list": "list",
    "lists": "list",
    "tuples": "tuple",
    "files": "file",
    "directory": "dir",
    "directories": "dir",
    "folder": "dir",
    "folders": "dir",
    "characters": "char",
    "character": "char",
    "chars": "char",
    "delete": "remove",
    "erase": "remove",
    "drop": "remove",
    "iterate": "loop",
    "iterating": "loop",
    "iteration": "loop",
    "loops": "loop",
    "element": "item",
    "elements": "item",
    "items": "item",
    "values": "value",
    "keys": "key",
    "columns": "column",
    "rows": "row",
    "numbers": "number",
}

# The restatement check's negations: a restated source sentence that adds or drops one of
# these contradicts its source. Narrower than NEGATION ("without", "except" qualify a
# restated sentence without reversing it).
RESTATEMENT_NEGATIONS = frozenset({"not", "never", "no", "nor", "neither"})
