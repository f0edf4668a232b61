"""Reference identifier recall: how much of a reference answer's code vocabulary an answer
names.

From the code of a reference (its fenced blocks and inline code spans, or all of it when
the reference is a bare snippet) we keep what a correct answer would have to name: the
functions and methods called, attributes accessed, modules imported, types
(CamelCase), command-line flags and version numbers. Names the snippet defines itself
(variables, parameters, functions, classes), language keywords, string literals,
comments and a few names every snippet uses (`print`, `self`, `len`) are left out: they
say nothing about whether the answer found the right API. An answer "finds" a name when
it contains it as a whole word, in code or prose.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
_INLINE = re.compile(r"`([^`\n]+)`")
_STRING = re.compile(r"\"\"\".*?\"\"\"|'''.*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_COMMENT = re.compile(r"(?m)(?:^|\s)(?:#|//)(?![!\[]).*$")
_NAME = r"[A-Za-z_$][A-Za-z0-9_$]*"
_CALL = re.compile(rf"(?<![\w$.])({_NAME})!?\s*\(")
_DOTTED_STRING = re.compile(r"[\"'](\w+(?:\.\w+)+)[\"']")
_COMMAND_LINE = re.compile(
    r"(?m)^\s*(?:\$\s+)?([a-z][\w.-]*)(?:\s+([a-z][\w-]*))?(?:\s+[^\s(){};=<>]+)*\s*$"
)
_SINGLE_TOKEN = re.compile(r"^[A-Za-z_$][\w.$-]*$")
_MODULE_ALIASES = frozenset({"np", "pd", "plt", "tf", "sns", "nx", "sp", "cv2", "torch", "$"})
_ATTRIBUTE = re.compile(rf"(?:\.|::|->)\s*({_NAME})")
_DOTTED_BASE = re.compile(rf"(?<![\w$.])({_NAME})\s*(?:\.|::)\s*{_NAME}")
_IMPORT = re.compile(
    rf"(?m)^\s*(?:from\s+({_NAME}(?:\.{_NAME})*)\s+)?import\s+([\w., ]+)|"
    rf"require\(\s*['\"]([\w@/.-]+)['\"]\s*\)|#include\s*[<\"]([\w/.]+)[>\"]"
)
_TYPE = re.compile(r"(?<![\w$])([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[A-Z][a-z]+[A-Z]\w*)\b")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]+)")
_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+(?:\.\d+)*)(?![\w.])")
_DEFINED = re.compile(
    rf"(?m)(?:\b(?:def|class|function|fn|func|let|var|const|val|struct|enum|interface|type)"
    rf"\s+({_NAME}))|^\s*({_NAME})\s*(?::[^=\n]+)?=(?!=)"
)
_PARAMS = re.compile(rf"\b(?:def|function|fn|func)\s+{_NAME}\s*\(([^)]*)\)")

# Keywords of the common languages and names every snippet uses.
_IGNORED = frozenset(
    """
    if else elif for while return def class import from as with try except finally raise
    pass break continue lambda yield in is not and or none true false null undefined
    function var let const new this self super public private protected static void int
    float double char bool boolean string str list dict set tuple print len range type
    object return async await case switch default do goto sizeof struct enum typedef
    extern unsigned signed long short auto register volatile include define echo then
    fi done end begin nil func fn mut impl use pub crate mod match loop where trait val
    object package interface extends implements throws throw catch instanceof main args
    println printf console log document window foo bar baz test example value result
    """.split()
)


def code_of(reference: str, *, is_code: bool = False) -> str:
    """The code of a reference: its fenced blocks and inline spans, or all of it."""
    if is_code:
        return reference
    blocks = _FENCED.findall(reference)
    prose = _FENCED.sub("\n", reference)
    return "\n".join([*blocks, *_INLINE.findall(prose)])


def _defined_names(code: str) -> set[str]:
    names = {a or b for a, b in _DEFINED.findall(code)}
    for params in _PARAMS.findall(code):
        names.update(re.findall(_NAME, params))
    return names


def _is_module(base: str, imported: set[str]) -> bool:
    """A dotted access's base names an API (not a variable) when it is imported, a
    standard module, a conventional module alias or a class name."""
    return (
        base in imported
        or base in sys.stdlib_module_names
        or base in _MODULE_ALIASES
        or base[:1].isupper()
    )


def identifiers(reference: str, *, is_code: bool = False) -> set[str]:
    """The names, flags and versions a correct answer would have to name."""
    raw = code_of(reference, is_code=is_code)
    code = _COMMENT.sub("", _STRING.sub('""', raw))
    defined = _defined_names(code)
    found: set[str] = set()
    imported: set[str] = set()
    for module, names, required, header in _IMPORT.findall(code):
        for part in [module, required, header, *names.split(",")]:
            imported.update(re.findall(_NAME, part.replace(" as ", " ").split(" ")[0]))
    found |= imported
    found.update(_CALL.findall(code))
    found.update(_ATTRIBUTE.findall(code))
    found.update(b for b in _DOTTED_BASE.findall(code) if _is_module(b, imported))
    found.update(_DOTTED_STRING.findall(raw))  # configuration keys, module paths
    for command, sub in _COMMAND_LINE.findall(code):
        found.update({command, sub} if "." not in command else {command})
    if not is_code:
        spans = _INLINE.findall(_FENCED.sub("\n", reference))
        found.update(span for span in spans if _SINGLE_TOKEN.match(span.strip()))
    found.update(_TYPE.findall(code))
    found.update(_FLAG.findall(code))
    found.update(_VERSION.findall(code))
    return {
        name
        for name in found
        if name
        and name.lower() not in _IGNORED
        and (name not in defined or name in _ATTRIBUTE.findall(code))
        and (len(name) > 1 or name.isupper())
    }


def _present(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w$-]){re.escape(name)}(?![\w$])", text) is not None


def found_in(names: Iterable[str], answer: str) -> set[str]:
    """The names the answer contains as whole words."""
    return {name for name in names if _present(name, answer)}


def identifier_recall(reference: str, answer: str, *, is_code: bool = False) -> float | None:
    """Share of the reference's identifiers the answer names; None when it has none."""
    names = identifiers(reference, is_code=is_code)
    if not names:
        return None
    return len(found_in(names, answer)) / len(names)
