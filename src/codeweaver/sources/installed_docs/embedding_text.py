"""What each docs entry is embedded as: its name and the first prose sentence of its
docstring (see `vectors`). Builtins read as Python spells them (`str.join (built-in
method)`); doctest lines and `name(args) -> type` lines are code, not a summary (`zip`
starts with an example), and a signature ending in a sentence (`D.update(...) -> None.
Update D from dict/iterable E and F.`) gives that sentence.
"""

from __future__ import annotations

import re

from codeweaver.sources.installed_docs.model import DocEntry

SUMMARY_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
#: `int(x, base=10) -> integer`, `od.pop(k[,d]) -> v, remove ...`: a call line and its type.
_SIGNATURE_LINE = re.compile(r"^\s*[\w.]+\(.*?\)\s*-+>\s*[^,.\s]*[,.]?\s*")
#: The sentence after a signature's return type (`-> None.  Update D from ...`, `--> Yield ...`).
_SIGNATURE_SUMMARY = re.compile(r"-+>\s*[^.]*?\.\s+(\S.*)$|-->\s*(\S.*)$")


def _prose(line: str) -> str:
    """The line without code: doctest lines go, a signature line keeps its trailing words."""
    if line.lstrip().startswith((">>>", "... ")):
        return ""
    call = _SIGNATURE_LINE.match(line)
    if call is None:
        return line
    rest = line[call.end() :]
    return rest if len(rest.split()) >= 3 else ""


def summary_paragraph(entry: DocEntry) -> str:
    """The first prose paragraph of the docstring, or the sentence of its signature."""
    found = _SIGNATURE_SUMMARY.search(entry.signature)
    sentence = (found.group(1) or found.group(2)).strip() if found else ""
    # Only a real sentence: `--> dict with default factory` says less than the docstring.
    if sentence[:1].isupper() and sentence.endswith(".") and len(sentence.split()) >= 3:
        return sentence
    for paragraph in entry.doc.split("\n\n"):
        text = " ".join(" ".join(_prose(line) for line in paragraph.splitlines()).split())
        if text:
            return text
    return ""


def embedding_label(entry: DocEntry) -> str:
    """`json.loads`; builtins as Python spells them: `zip (built-in class)`, `str.join
    (built-in method)`; topics: `for (Python language topic)`."""
    if entry.kind == "topic":
        return f"{entry.name} (Python language topic)"
    if entry.name.startswith("builtins."):
        rest = entry.name.removeprefix("builtins.")
        return f"{rest} (built-in {'method' if '.' in rest else entry.kind})"
    return entry.name


def embedding_text(entry: DocEntry) -> str:
    """`label: first prose sentence of the docstring` (see the module docstring)."""
    paragraph = summary_paragraph(entry)
    end = _SENTENCE_END.search(paragraph, 40)
    summary = (paragraph[: end.start()] if end else paragraph)[:SUMMARY_CHARS]
    label = embedding_label(entry)
    return f"{label}: {summary}" if summary else label
