"""Queries shaped for each online service, built from the English search form by rules.

A search engine given a whole natural-language question ranks on its noise, and the
strict ones (Stack Overflow's `q`, GitHub code search, which require every term) return
nothing. So each service gets the part of the question it can use:
- Stack Overflow: a title-like query of at most `MAX_TITLE_WORDS` words, or an error line
  as a quoted phrase;
- GitHub: identifiers, API names and error strings, never prose words;
- the web: at most `MAX_WEB_CHARS` characters, the error line first.
No query is longer than `MAX_QUERY_CHARS` (the web's excepted), always cut at a word boundary.
"""

from __future__ import annotations

import re

from codeweaver.words import STOPWORDS

MAX_QUERY_CHARS = 150
MAX_TITLE_WORDS = 12
MAX_WEB_CHARS = 300
MAX_CODE_TERMS = 4

# `KeyError: 'id'`, `requests.exceptions.ConnectionError: ...`: a name ending in Error,
# Exception, Warning…, then its message up to the end of the line. The dotted prefix is
# bounded: every segment of `a.a.a…` starts a try, and each would rescan the rest.
ERROR_LINE = re.compile(
    r"\b((?:[A-Za-z_][\w.]{0,199}\.)?[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b"
    r"(?::[ \t]*([^\n]{1,120}))?"
)
_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
# Characters the services read as operators: `[tag]`, quotes, `-term`, `is:answer`…
_OPERATORS = re.compile(r'[\[\]"{}<>|\\]')
_HANGUL_OR_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]")


def cut_words(text: str, max_chars: int) -> str:
    """`text` on one line, cut to at most `max_chars` at a word boundary."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars + 1]
    return cut.rsplit(" ", 1)[0] if " " in cut else text[:max_chars]


def is_latin(text: str) -> bool:
    """Whether `text` has no Hangul or CJK: the only text the English services can match."""
    return not _HANGUL_OR_CJK.search(text)


def error_line(text: str) -> str | None:
    """The last `SomethingError: message` of `text`, the line a traceback ends on."""
    matches = list(ERROR_LINE.finditer(text))
    if not matches:
        return None
    name, message = matches[-1].group(1), (matches[-1].group(2) or "").strip()
    return " ".join(f"{name}: {message}".split()) if message else name


def is_error_line(query: str) -> bool:
    """Whether the query is an error line and nothing more (the error variation)."""
    return error_line(query) == " ".join(query.split())


def _prose_lines(text: str) -> list[str]:
    return [line.strip() for line in _FENCED.sub("\n", text).splitlines() if line.strip()]


def core_terms(text: str) -> list[str]:
    """The words of `text` that are not stopwords, in order, each once."""
    words = [w.strip(".,;:!?()'") for w in _OPERATORS.sub(" ", text).split()]
    kept = [w for w in words if len(w) > 1 and w.lower() not in STOPWORDS]
    return list(dict.fromkeys(kept))


def title_query(text: str) -> str:
    """A Stack Overflow title-like query: the first prose line when it is short enough,
    else its core terms; at most `MAX_TITLE_WORDS` words and `MAX_QUERY_CHARS` characters."""
    lines = _prose_lines(text)
    title = _OPERATORS.sub(" ", lines[0] if lines else text)
    words = title.split()
    if len(words) > MAX_TITLE_WORDS:
        words = core_terms(title)[:MAX_TITLE_WORDS]
    return cut_words(" ".join(words), MAX_QUERY_CHARS)


_LATIN_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+#-]*")
MIN_LATIN_TERMS = 2


def latin_query(text: str, known: frozenset[str] = frozenset()) -> str:
    """From text in another language, the English words the asker kept (names, errors,
    identifiers: "'HTMLElement | null' 형식의 … 'Element'" → "HTMLElement null Element"),
    or "" when fewer than `MIN_LATIN_TERMS` of them say more than a technology's name
    (`known`) or a number: "Python 3.6" alone would match any Python question."""
    terms = [w.strip(".-") for w in _LATIN_WORD.findall(_OPERATORS.sub(" ", text))]
    terms = list(dict.fromkeys(t for t in terms if len(t) > 1 and t.lower() not in STOPWORDS))
    telling = [t for t in terms if t.lower() not in known and not t[0].isdigit()]
    if len(telling) < MIN_LATIN_TERMS:
        return ""
    return cut_words(" ".join(terms[:MAX_TITLE_WORDS]), MAX_QUERY_CHARS)


def phrase(text: str) -> str:
    """`text` as one quoted phrase (inner quotes dropped), within `MAX_QUERY_CHARS`."""
    inner = cut_words(_OPERATORS.sub(" ", text), MAX_QUERY_CHARS - 2)
    return f'"{inner}"'


# Code-like terms: dotted names (df.groupby, os.path.join), calls, snake_case, camelCase,
# CamelCase class names with an inner capital (DataFrame, KeyError). Not words with digits
# ("u16", "utf8", "python3"): alone they match any file. A dotted name or a call may start
# inside a word ("9df.head"), so each letter of a long word would start a try that rescans
# the rest of it: a try starts after a letter never (the one before already tried), and
# the first name is bounded (80 characters).
_NAME_START = r"(?<![A-Za-z_])[A-Za-z_]\w{0,79}"
_CODE_TERM = re.compile(
    rf"{_NAME_START}(?:\.[A-Za-z_]\w*)+(?:\(\))?|{_NAME_START}\(\)|\b[A-Za-z]*_\w*[A-Za-z0-9]\b|"
    r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"
)
# Dotted words that are prose, versions or file names rather than code.
_NOT_CODE = re.compile(r"^(?:e\.g|i\.e|etc|vs)\b|^\d|\.(?:com|org|io|net|txt|md|html?)$", re.I)


def code_terms(text: str, limit: int = MAX_CODE_TERMS) -> list[str]:
    """Identifiers and API names `text` mentions, in order, each once (no prose words)."""
    found: list[str] = []
    for match in _CODE_TERM.finditer(text):
        term = match.group(0).removesuffix("()").strip("._")
        if len(term) < 3 or _NOT_CODE.search(term) or term.lower() in STOPWORDS:
            continue
        if term not in found:
            found.append(term)
    return found[:limit]


def web_query(text: str) -> str:
    """At most `MAX_WEB_CHARS` characters at a word boundary, the error line first."""
    base = " ".join(_prose_lines(text)) or text
    error = error_line(text)
    if error and error not in " ".join(base.split()):
        base = f"{error} {base}"
    elif error:
        base = f"{error} {' '.join(base.split()).replace(error, ' ')}"
    return cut_words(base, MAX_WEB_CHARS)
