"""Query variations for multi-query retrieval, built without a model call.

A variation is added only where it reaches documents the question as written cannot:
- the English form of a non-English question: the embedded embedder and most sources are
  English-only, so a Korean query finds little on its own;
- the error line of a pasted traceback or message (`KeyError: 'id'`): the words that
  documents and Q&A titles actually repeat, which a long question buries.
Paraphrases of an English question are not added: with lexical and MiniLM retrieval they
return the same documents for another model call's price.
"""

from __future__ import annotations

import re

from codeweaver.sources.query_shapes import error_line as error_query
from codeweaver.words import STOPWORDS
from codeweaver.words.language import is_english

MAX_QUERIES = 3
MAX_TITLE_CHARS = 200
MAX_NAMES = 4
FOCUS = 0.6  # an error line shorter than this share of the query narrows it usefully


_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE = re.compile(r"`([^`\n]{2,60})`")
# Names a post's prose quotes: dotted names, calls, snake_case and CamelCase identifiers.
_NAME = re.compile(
    r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b(?:\(\))?|\b[A-Za-z_]\w*\(\)|"
    r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"
)
_MARKDOWN_ESCAPE = re.compile(r"\\([_*\[\]#`])")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.-]*(?:\(\))?$")


def search_form(question: str) -> str:
    """What a search engine should get for a question.

    A one-line question is itself. A pasted post (a title, then a body with code) is its
    title plus the few names its prose quotes (`df.duplicated`, `insert_many`): a search
    engine given the whole post, code and all, ranks on its noise. The error line is
    added as a variation of its own (`query_variations`).
    """
    text = _MARKDOWN_ESCAPE.sub(r"\1", question.strip())  # "insert\_many" → "insert_many"
    lines = [line.strip() for line in _FENCED.sub("\n", text).splitlines() if line.strip()]
    if not lines:
        return " ".join(text.split())
    if len(lines) == 1 and len(lines[0]) <= MAX_TITLE_CHARS:
        return " ".join(lines[0].split())
    title = lines[0]
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    body = "\n".join(lines[1:])
    quoted = [span.strip() for span in _INLINE.findall(body)]
    names = [q for q in quoted if _IDENTIFIER.match(q)] + _NAME.findall(_INLINE.sub(" ", body))
    seen = title.lower()
    extra: list[str] = []
    for name in dict.fromkeys(n.removesuffix("()") for n in names):
        if name.lower() not in seen and len(extra) < MAX_NAMES:
            extra.append(name)
            seen += " " + name.lower()
    return " ".join([*title.split(), *extra])


_TERM = re.compile(r"[\w.+#-]+")
MAX_GENERAL_TERMS = 6


def general_query(query: str) -> str | None:
    """The query's core terms (stopwords dropped, names kept as written), or None when
    that is the query already: a search engine would return the same documents."""
    terms = [t for t in _TERM.findall(query) if len(t) > 1 and t.lower() not in STOPWORDS]
    general = " ".join(list(dict.fromkeys(terms))[:MAX_GENERAL_TERMS])
    return general if general and general != " ".join(query.split()) else None


def query_variations(query: str, question: str, canonical: str | None) -> list[str]:
    """The query first, then the variations that can raise recall; distinct, at most 3."""
    found = [query]
    if canonical and not is_english(query) and is_english(canonical):
        found.append(canonical)
    error = error_query(question)
    if error and len(error) < FOCUS * len(query):  # the error line is not already the query
        found.append(error)
    distinct = list(dict.fromkeys(" ".join(q.split()) for q in found if q.strip()))
    return distinct[:MAX_QUERIES]
