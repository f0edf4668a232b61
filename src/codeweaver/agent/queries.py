"""Query variations for multi-query retrieval (SPEC §3), built without a model call.

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

from codeweaver.agent.language import is_english

MAX_QUERIES = 3
FOCUS = 0.6  # an error line shorter than this share of the query narrows it usefully
_ERROR_LINE = re.compile(
    r"\b((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b"
    r"(?::[ \t]*([^\n]{1,120}))?"
)


def error_query(text: str) -> str | None:
    """The last `SomethingError: message` of a question, the line a traceback ends on."""
    matches = list(_ERROR_LINE.finditer(text))
    if not matches:
        return None
    name, message = matches[-1].group(1), (matches[-1].group(2) or "").strip()
    return " ".join(f"{name}: {message}".split()) if message else name


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
