"""What the installed library itself says about a name the code uses and it lacks: the
message its module `__getattr__` gives for a removed name (NumPy's `__expired_attributes__`:
"Use `np.float64` instead."), or, for a method a class lacks, the line of a top-level
function's docstring that starts with the method's name and names the class (pandas'
`concat`: "Append a single row to the end of a ``DataFrame`` object."). Read statically,
like the rest of the check; "" when silent.
"""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path
from typing import Any

from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.griffe_objects import final_target

logger = logging.getLogger(__name__)

MAX_HINT = 200
MAX_MENTIONS = 2


def removal_message(api: ApiIndex, module_path: str, name: str) -> str:
    """The message module `module_path` has for its missing attribute `name`: a value of a
    literal dict its `__getattr__` looks `name` up in ("" when there is none)."""
    module = api.get(module_path)
    if module is None or not getattr(module, "is_module", False) or not module.filepath:
        return ""
    try:
        tree = ast.parse(Path(str(module.filepath)).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ""
    for table in _lookup_tables(tree):
        try:
            attribute = final_target(module.members.get(table))
            value = ast.literal_eval(str(attribute.value)) if attribute is not None else None
        except Exception:  # not a literal (a comprehension, a call): nothing to read
            continue
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return _one_line(value[name])
    return ""


def _lookup_tables(tree: ast.Module) -> list[str]:
    """Names `x` of `<arg> in x` tests inside the module's `def __getattr__(arg)` (at its
    top level, or under a top-level `if` or `try`, as NumPy defines it)."""
    for node in _module_level(tree.body):
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            tables = []
            for test in ast.walk(node):
                if (
                    isinstance(test, ast.Compare)
                    and len(test.ops) == 1
                    and isinstance(test.ops[0], ast.In)
                    and isinstance(test.comparators[0], ast.Name)
                ):
                    tables.append(test.comparators[0].id)
            return list(dict.fromkeys(tables))
    return []


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If):
            found += _module_level(node.body) + _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            found += _module_level(node.body) + _module_level(node.orelse)
            found += _module_level(node.finalbody)
    return found


def class_mentions(api: ApiIndex, class_path: str, name: str) -> list[str]:
    """Lines of the docstrings of the package's top-level functions and classes that start
    with `name` and name the class: `pandas.concat`: "Append a single row to the end of a
    DataFrame object." At most `MAX_MENTIONS`, as "`package.function`: line"."""
    package, _, rest = class_path.partition(".")
    owner = rest.rpartition(".")[2]
    top = api.module(package)
    if top is None or not owner or not name:
        return []
    # The missing name as the line's first word: a sentence saying what to do ("Append a
    # single row to the end of a DataFrame"), not a parameter's ("String to append …").
    word = re.compile(rf"^\s*{re.escape(name)}\b", re.IGNORECASE)
    owner_word = re.compile(rf"\b{re.escape(owner)}\b")
    found: list[str] = []
    for member_name, member in sorted(top.members.items()):
        if member_name.startswith("_") or len(found) >= MAX_MENTIONS:
            continue
        line = _mention(final_target(member), word, owner_word)
        if line:
            found.append(f"`{package}.{member_name}`: {line}")
    return found


def _mention(obj: Any, word: re.Pattern[str], owner: re.Pattern[str]) -> str:
    if obj is None or not (getattr(obj, "is_function", False) or getattr(obj, "is_class", False)):
        return ""
    docstring = getattr(obj, "docstring", None)
    for line in (docstring.value if docstring is not None else "").splitlines():
        plain = line.replace("`", "")
        if word.search(plain) and owner.search(plain):
            return _one_line(plain)
    return ""


def _one_line(text: str) -> str:
    """`text` as one line of at most `MAX_HINT` characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_HINT else line[: MAX_HINT - 1].rstrip() + "…"
