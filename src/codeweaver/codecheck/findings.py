"""Check a Python code block against the installed APIs: names that do not exist at the
installed versions, keywords a signature cannot take. Precision first: only what the
API index knows for certain (`api.Verdict.MISSING`, a closed keyword list) is reported.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from codeweaver.codecheck.api import ApiIndex, Verdict
from codeweaver.codecheck.returns import call_returns
from codeweaver.codecheck.uses import Use, collect_uses


@dataclass(frozen=True)
class Finding:
    """`name`: the dotted API (`pandas.DataFrame.append`), or `json.loads(indent)` for a
    keyword; `line`: 1-based, in the block."""

    name: str
    line: int
    message: str
    kind: str  # "missing" | "keyword"
    api: str = ""  # the qualified API looked up: `pandas.DataFrame.append`, `builtins.sorted`
    keyword: str = ""
    where: str = ""  # what is installed: "pandas 2.2.3", "Python 3.11" ("" if unknown)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "line": self.line, "message": self.message, "kind": self.kind}


@dataclass(frozen=True)
class CodeReport:
    findings: tuple[Finding, ...]
    checked: int  # uses judged against a known owner
    parsed: bool  # False: not Python the check can read (a fragment, another language)
    # The qualified APIs the code uses that exist (`pandas.concat`), builtins left out:
    # what the answer may cite the installed documentation of.
    apis: tuple[str, ...] = ()


# The syntax errors that say the code is Python 2 (CPython words them so): certain, where
# any other error may be a fragment, a console session, output or another language.
PYTHON_2 = {
    "Missing parentheses in call to 'print'": "print",
    "Missing parentheses in call to 'exec'": "exec",
    "multiple exception types must be parenthesized": "except",
}


def parse(code: str) -> ast.Module | SyntaxError | None:
    """The block's syntax tree, or the `SyntaxError` it raises (None: it cannot be read)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes in old answers
        try:
            return ast.parse(code)
        except SyntaxError as error:
            return error
        except (ValueError, RecursionError, MemoryError):
            return None


def python_2(error: SyntaxError, api: ApiIndex) -> Finding | None:
    """A finding for code that is Python 2 by its syntax error's own words, else None."""
    message = str(error.msg or "")
    for words, what in PYTHON_2.items():
        if message.startswith(words):
            where = f"Python {api.python_version}" if api.python_version else ""
            installed = f" on {where}, installed here" if where else " on Python 3"
            text = f"this is Python 2 code ({message}); it does not run{installed}"
            return Finding(f"python2:{what}", error.lineno or 1, text, "syntax", "", "", where)
    return None


def check_python(code: str, api: ApiIndex) -> CodeReport:
    """The findings of one code block: a block that does not parse is judged only when
    its error says it is Python 2."""
    tree = parse(code)
    if not isinstance(tree, ast.Module):
        old = python_2(tree, api) if isinstance(tree, SyntaxError) else None
        return CodeReport((old,), 1, True) if old else CodeReport((), 0, False)
    findings: dict[tuple[str, int], Finding] = {}
    checked = 0
    apis: dict[str, None] = {}

    def returns(path: str, call: ast.Call, receiver: str | None) -> str | None:
        return call_returns(api, path, call, receiver)

    for use in collect_uses(tree, api.is_class, returns):
        found, judged = _judge(use, api)
        checked += judged
        for finding in found:
            findings.setdefault((finding.name, finding.line), finding)
        if judged and not found and not use.owner.path.startswith("builtins."):
            apis[f"{use.owner.path}.{use.name}" if use.name else use.owner.path] = None
    return CodeReport(tuple(findings.values()), checked, True, tuple(apis))


def _judge(use: Use, api: ApiIndex) -> tuple[list[Finding], int]:
    owner = api.get(use.owner.path)
    if owner is None:
        return [], 0
    target = owner
    if use.name:
        if use.name.startswith("__") or (use.owner.instance and not use.call):
            return [], 0  # dunders, and instance attributes (set anywhere, at run time)
        if use.owner.path.startswith("builtins.") and not use.owner.instance:
            # `str.decode`, `map.items`: in a snippet, more often a variable named after a
            # builtin (`map = {...}` elsewhere) than the builtin itself.
            return [], 0
        verdict = api.member(owner, use.name, call=use.call)
        if verdict is Verdict.MISSING:
            where = api.version_of(use.owner.path)
            installed = f" in {where}, installed here" if where else ""
            message = f"`{use.dotted}` does not exist{installed}"
            qualified = f"{use.owner.path}.{use.name}"
            return [Finding(use.dotted, use.line, message, "missing", qualified, "", where)], 1
        if verdict is Verdict.UNKNOWN:
            return [], 0
        target = api.get(f"{use.owner.path}.{use.name}")
    if not use.call or not use.keywords or target is None:
        return [], 1
    accepted = api.keywords(target)
    if accepted is None:
        return [], 1
    wrong = [k for k in use.keywords if k not in accepted]
    qualified = f"{use.owner.path}.{use.name}" if use.name else use.owner.path
    return [
        Finding(f"{use.dotted}({k})", use.line, f"`{use.dotted}` takes no keyword `{k}`",
                "keyword", qualified, k)
        for k in wrong
    ], 1  # fmt: skip
