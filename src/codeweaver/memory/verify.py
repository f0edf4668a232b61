"""Does a cached question ask the same thing as a new one? Decided by rules, after cosine.

Embeddings put "convert a string to an int" and "convert an int to a string" at cosine
0.996, so a candidate found by similarity must also pass checks of what embeddings blur:

- direction: the same terms on the two sides of "to" / "into" / "from" / "than", swapped;
- versions and numbers: "python 2" is not "python 3";
- technologies: two different languages or libraries named;
- negation: "without", "not", "except" on one side only;
- qualifiers: a distinctive word one question adds ("utc", "binary", "descending"),
  after placeholders (backticked or quoted names and values) are set aside and a few
  synonyms are merged (dict/dictionary, int/integer, df/dataframe, …).

Every check rejects; none accepts on its own. The reasons are returned for the steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import snowballstemmer

_PLACEHOLDER = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
# Dotted names stay whole: "datetime.date" is not "datetime.datetime".
_WORD = re.compile(r"[a-z_][a-z0-9_+#]*(?:\.[a-z_][a-z0-9_]*)*|\d+(?:\.\d+)*")
_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
_DIRECTION = frozenset({"to", "into", "from", "than", "as"})
_NEGATION = frozenset(
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
# Words that carry no subject of their own: they never make two questions different.
_FILLER = frozenset(
    """a an the of in on at by for with and or is are be to into from as how do does did
    can could should would i you we my our your it its this that these those what which
    way ways best good fastest simplest easiest efficient efficiently pythonic most more
    quickly easily properly correctly simple simply given specific certain particular
    python using use used get getting make making want need possible elegant proper
    correct right there here just only also already exist
    exists existing whether if then than so such very really
    create creating find finding retrieve fetch obtain return variable variables contain
    containing contains associated where ascending order""".split()
)
_SYNONYMS = {
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
_TECH = frozenset(
    """python python2 python3 java javascript typescript node nodejs react vue angular
    django flask fastapi spring kotlin swift rust go golang ruby rails php perl c c++ c#
    csharp scala haskell bash shell powershell sql mysql postgresql postgres sqlite
    mongodb redis pandas numpy scipy tensorflow pytorch keras matplotlib docker
    kubernetes git linux ubuntu windows macos android ios excel jquery""".split()
)


@dataclass(frozen=True)
class Verdict:
    same: bool
    reason: str


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.])")


def _values(text: str) -> set[str]:
    """Literal values a question names: quoted or backticked non-identifiers, and numbers."""
    found = set()
    for match in _PLACEHOLDER.finditer(text):
        inner = match.group()[1:-1].strip()
        if inner and not _IDENTIFIER.match(inner):
            found.add(inner)
    found.update(_BARE_NUMBER.findall(_PLACEHOLDER.sub(" ", text)))
    return found


_STEMMER = snowballstemmer.stemmer("english")


def _stem(word: str) -> str:
    word = _SYNONYMS.get(word, word)
    if "." in word or not word.isalpha() or word in _TECH or word in _NEGATION:
        return word
    return str(_STEMMER.stemWord(word))


_FILLER_STEMS = _FILLER | {_stem(w) for w in _FILLER}


def _pins_down(value: str) -> bool:
    """A number, a separator or an index changes the task; a sample text usually not."""
    return (
        bool(_NUMBER.match(value))
        or (len(value) <= 3 and not value.isalpha())
        or (value.startswith("[") and value.endswith("]"))
    )


def _terms(text: str, keep_quoted: bool = False) -> list[str]:
    text = text.lower().replace("n't", "nt")
    if not keep_quoted:
        text = _PLACEHOLDER.sub(" ", text)
    text = text.replace("data frame", "dataframe")
    return [_stem(w) for w in _WORD.findall(text)]


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in _FILLER_STEMS and w not in _NEGATION and w not in _TECH]


def _sides(words: list[str]) -> tuple[set[str], set[str]] | None:
    """Content words before and after the first direction word ("str to int")."""
    for i, word in enumerate(words):
        if word in _DIRECTION:
            before = {w for w in _content(words[:i]) if not _NUMBER.match(w)}
            after = {w for w in _content(words[i + 1 :]) if not _NUMBER.match(w)}
            if word == "from":
                before, after = after, before
            if before and after:
                return before, after
    return None


def _reversed(one: list[str], two: list[str]) -> str | None:
    """A term that is the source in one question and the target in the other."""
    first, second = _sides(one), _sides(two)
    if first is None or second is None:
        return None
    source_became_target = first[0] & second[1] - first[1]
    target_became_source = first[1] & second[0] - first[0]
    if source_became_target and target_became_source:
        return f"{min(source_became_target)} ↔ {min(target_became_source)}"
    return None


_DIGITS = re.compile(r"\d+(?:\.\d+)*")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9+#.]*[A-Za-z0-9+#]|[A-Za-z]")


def lost_in_translation(original: str, translation: str) -> set[str]:
    """Numbers and Latin-script terms (names, versions) of `original` that its translation
    dropped: a key that lost them could meet the wrong question, so it is not used."""
    kept_numbers = set(_DIGITS.findall(translation))
    kept_words = {w.lower() for w in _LATIN.findall(translation)}
    lost = {n for n in _DIGITS.findall(original) if n not in kept_numbers}
    lost |= {w for w in _LATIN.findall(original) if len(w) > 1 and w.lower() not in kept_words}
    return lost


NEGATION = _NEGATION


def stemmed_words(text: str) -> set[str]:
    """Every word of `text`, stemmed, quoted code included (for comparing with sources)."""
    return set(_terms(text, keep_quoted=True))


def subject_words(text: str) -> set[str]:
    """The words that carry a sentence's subject: no filler, negation or technology."""
    return set(_content(_terms(text, keep_quoted=True)))


def content_size(text: str) -> int:
    """How many distinct subject words a question has for the rules to compare."""
    return len(set(_content(_terms(text))))


def same_question(first: str, second: str) -> Verdict:
    """Whether two questions ask the same thing, as far as rules can tell."""
    one, two = _terms(first), _terms(second)
    swapped = _reversed(one, two)
    if swapped:
        return Verdict(False, f"opposite direction ({swapped})")
    values = _values(first), _values(second)
    if values[0] and values[1] and values[0] != values[1]:
        changed = ", ".join(sorted(values[0] ^ values[1]))
        return Verdict(False, f"different versions, numbers or values ({changed})")
    pinned = {v for v in values[0] ^ values[1] if _pins_down(v)}
    if pinned:
        return Verdict(False, f"one names a specific value ({', '.join(sorted(pinned))})")
    techs = set(one) & _TECH, set(two) & _TECH
    if techs[0] and techs[1] and not techs[0] & techs[1]:
        return Verdict(False, f"different technologies ({', '.join(sorted(techs[0] | techs[1]))})")
    if bool(set(one) & _NEGATION) != bool(set(two) & _NEGATION):
        return Verdict(False, "negated on one side only")
    extra = set(_content(one)) ^ set(_content(two))
    extra = {w for w in extra if not _NUMBER.match(w)}
    if extra:
        return Verdict(False, f"asks about different things ({', '.join(sorted(extra))})")
    return Verdict(True, "same question")
