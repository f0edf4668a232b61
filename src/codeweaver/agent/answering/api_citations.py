"""Cite an API's documentation where the answer's code uses that API.

Documentation of a public API (an installed package's function, class, method or
module) is not put in the answer prompt: the model already knows public APIs, and a page
of the wrong one misleads it. On 30 CoNaLa questions (`codeweaver eval answers`, seed 1)
the answers written with such pages in the prompt named 0.398 of the reference snippets'
identifiers against the bare model's 0.512 ("Python 'extend' for a dictionary" was
answered with `list.extend` because that page was found); appending the pages after the
question under the bare prompt did no better. Cited after the answer is written, and
only when the answer's code uses the API a page documents, the pipeline matches the
bare model (0.512) and 6 of the 30 answers link the installed version's documentation
of what the reader is told to call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeweaver.agent.answering.citations import append_citation, drop_sources, prose_blocks
from codeweaver.agent.state import SearchResult
from codeweaver.sources.base import DocumentsApis, Source

# The code check's APIs cited at most, first used first: a source list stays readable.
MAX_CODE_PAGES = 5

_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_INLINE = re.compile(r"`([^`\n]+)`")
_INLINE_SPAN = re.compile(r"`[^`\n]*`")
# A sentence ends at . ! ? or : before a space, or at the end of its line.
_END = re.compile(r"[.!?:](?=\s|$)|\n")


def cited_by_name(result: SearchResult) -> bool:
    """Whether a result documents a named API, and so is cited by name, after answering."""
    return bool(result.get("api"))


def answer_code(answer: str) -> str:
    """The code of an answer: its fenced blocks and inline code spans."""
    prose = _FENCED.sub("\n", answer)
    return "\n".join([*_FENCED.findall(answer), *_INLINE.findall(prose)])


def _use_pattern(api: str, kind: str) -> re.Pattern[str]:
    parts = api.split(".")
    leaf = re.escape(parts[-1])
    if kind == "module":
        name = re.escape(api)
        return re.compile(rf"\bimport\s+{name}\b|\bfrom\s+{name}\s+import\b|(?<![\w.]){name}\.")
    if kind in ("method", "property"):
        return re.compile(rf"\.{leaf}\b")
    if parts[0] == "builtins":  # `open(…)`, `str.join`, never `os.open(…)`
        return re.compile(rf"(?<![\w.]){leaf}\s*[(.]")
    if kind == "class":  # `pd.DataFrame(…)`, `Path.home()`
        return re.compile(rf"(?<!\w){leaf}\s*[(.]")
    parent = re.escape(parts[-2]) if len(parts) > 1 else ""
    # A module's function: `re.split(…)`, or called bare after `from re import split`.
    imported = rf"\bimport\b[^\n]*\b{leaf}\b[\s\S]*(?<![\w.]){leaf}\s*\("
    return re.compile(rf"(?<![\w.]){parent}\.{leaf}\s*\(|{imported}")


def uses_api(code: str, api: str, kind: str) -> bool:
    """Whether `code` calls or names the API `api` (a qualified name) of `kind`, also
    through its module's import alias (`import pandas as pd` … `pd.read_csv(`)."""
    if _use_pattern(api, kind).search(code):
        return True
    module, _, leaf = api.rpartition(".")
    if kind != "function" or not module:
        return False
    aliases = re.findall(rf"\bimport\s+{re.escape(module)}\s+as\s+(\w+)", code)
    return any(
        re.search(rf"(?<![\w.]){re.escape(alias)}\.{re.escape(leaf)}\s*\(", code)
        for alias in aliases
    )


def _sentence_end(block: str, start: int) -> tuple[int, bool]:
    """Where the sentence holding `start` ends in `block`: (index, ends with punctuation)."""
    spans = [m.span() for m in _INLINE_SPAN.finditer(block)]
    for end in _END.finditer(block, start):
        if not any(a <= end.start() < b for a, b in spans):
            return end.start(), block[end.start()] != "\n"
    return len(block.rstrip()), False


def _cite_sentence(answer: str, leaf: str, n: int) -> str | None:
    """The answer with `[n]` after the first prose sentence naming `leaf`, or None."""
    word = re.compile(rf"(?<!\w){re.escape(leaf)}(?!\w)")
    blocks = answer.split("\n\n")
    for i in prose_blocks(blocks):
        block = blocks[i]
        found = word.search(block)
        if found is None:
            continue
        end, punctuated = _sentence_end(block, found.end())
        if not punctuated:
            end = len(block[:end].rstrip())
        blocks[i] = f"{block[:end]} [{n}]{block[end:]}"
        return "\n\n".join(blocks)
    return None


def _cite_intro(answer: str, leaf: str, n: int) -> str | None:
    """The answer with `[n]` at the end of the prose paragraph introducing the first code
    block that names `leaf`, or None."""
    word = re.compile(rf"(?<!\w){re.escape(leaf)}(?!\w)")
    blocks = answer.split("\n\n")
    prose = list(prose_blocks(blocks))
    for i, block in enumerate(blocks):
        if i in prose or not word.search(block):
            continue
        before = [k for k in prose if k < i]
        if not before:
            return None
        blocks[before[-1]] = append_citation(blocks[before[-1]], n)
        return "\n\n".join(blocks)
    return None


def cite_used_apis(
    answer: str, candidates: list[SearchResult], first: int, *, intro: bool = False
) -> tuple[str, list[SearchResult]]:
    """Cite, numbered from `first`, each candidate whose API the answer's code uses and
    whose name a prose sentence says (with `intro`, else the paragraph introducing the
    code that uses it); returns the answer and the candidates cited."""
    code = answer_code(answer)
    cited: list[SearchResult] = []
    for result in candidates:
        api, kind = result.get("api", ""), result.get("api_kind", "")
        if not api or not uses_api(code, api, kind):
            continue
        leaf, n = api.split(".")[-1], first + len(cited)
        placed = _cite_sentence(answer, leaf, n)
        if placed is None and intro:
            placed = _cite_intro(answer, leaf, n)
        if placed is not None:
            answer = placed
            cited.append(result)
    return answer, cited


def cite_checked_apis(
    answer: str, sources: list[SearchResult], apis: Sequence[str], documented: list[Source]
) -> tuple[str, list[SearchResult]]:
    """Cite the installed documentation of the APIs the code check found the answer's code
    using (`apis`), from the sources that have a page per API; returns the answer and its
    sources with the pages cited appended. Pages already among `sources` are not repeated."""
    have = {s.get("reference") or s["url"] for s in sources}
    pages: list[SearchResult] = []
    for source in documented:
        if isinstance(source, DocumentsApis):
            pages += [
                p for p in source.api_pages(apis) if (p.get("reference") or p["url"]) not in have
            ]
    answer, used = cite_used_apis(answer, pages[:MAX_CODE_PAGES], len(sources) + 1, intro=True)
    return answer, [*sources, *used]


def uncite_namesakes(
    answer: str, sources: list[SearchResult], missing: Sequence[str], used: Sequence[str]
) -> tuple[str, list[SearchResult]]:
    """Drop the API pages cited for a name the code check found missing (`missing`:
    qualified, `pandas.DataFrame.append`): a page of another owner's method of that name
    (`pandas.HDFStore.append`) would vouch for a call that does not exist. A page of an
    API the code does use (`used`) stays."""
    leaves = {name.rsplit(".", 1)[-1] for name in missing}
    drop = {
        n
        for n, s in enumerate(sources, 1)
        if s.get("api")
        and s["api"].rsplit(".", 1)[-1] in leaves
        and s["api"] not in missing
        and s["api"] not in used
    }
    return drop_sources(answer, sources, drop)
