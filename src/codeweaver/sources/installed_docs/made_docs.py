"""Docstrings a library writes at import time, read from its source without running it.

pandas writes many of its docstrings with decorators: `@Appender(text)` appends a text,
`@Substitution(...)` fills `%s` / `%(name)s` placeholders and `@doc(*templates, **params)`
joins templates (strings, or another function's docs) and fills `{name}` placeholders. NumPy
documents its C functions and `ndarray`'s methods with `add_newdoc("numpy._core.multiarray",
"zeros", doc)` calls. `ast` sees a function without a docstring (`pandas.read_csv`,
`DataFrame.groupby`, `pandas.merge` in pandas 2.2) or none at all (`numpy.zeros`), so those
APIs, among the most asked about, had no page.

Here those expressions are evaluated over string literals only: names bound at module level
in the same module or imported from another module of the same distribution, items of a
dict of such strings (`_shared_docs["groupby"] = ...` in one module, read in another), `+`,
`%`, `.format`, `.replace`, `.strip` and `dedent`. Placeholders are filled by plain text
substitution (no format specification is honoured, so no width can blow a text up), what
cannot be evaluated counts as empty, every text is capped at `MAX_CHARS` and every chain of
names at `MAX_DEPTH`. Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

MAX_CHARS = 20_000
MAX_DEPTH = 12
#: The decorators that write a docstring (pandas' `Appender`, `Substitution`, `doc`).
DOC_DECORATORS = frozenset({"Appender", "Substitution", "doc"})
ADD_NEWDOC = "add_newdoc"
#: Values worth keeping for later evaluation: what a docstring can be built from.
_STRINGISH = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.Dict, ast.Name,
              ast.Subscript, ast.Attribute, ast.Tuple)  # fmt: skip
_PERCENT = re.compile(r"%(?:\((\w+)\))?[-#0 +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?([diouxXeEfFgGcrsa%])")
_BRACES = re.compile(r"\{\{|\}\}|\{(\w*)(?:![rsa])?(?::[^{}]*)?\}")

Value = str | dict[str, object] | tuple[object, ...]


class MadeDef(NamedTuple):
    """A definition whose docstring was evaluated (`resolve`)."""

    module: str
    qualname: str
    kind: str
    signature: str
    doc: str
    path: str


@dataclass
class Pending:
    """A function decorated with `DOC_DECORATORS`, as `ast_docs` found it."""

    module: str
    qualname: str
    kind: str
    signature: str
    doc: str | None  # its literal docstring
    decorators: list[ast.Call]  # as written, top to bottom
    path: str


@dataclass
class MadeDocs:
    """What one distribution's modules bind at module level, and what to evaluate."""

    assigned: dict[tuple[str, str], ast.expr] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[str, ast.expr]] = field(default_factory=dict)
    #: `from x import name` (module, name) -> (x, name); `import x as name` -> (x, "").
    imported: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    #: Docstrings of private functions, which have no page but `@doc(_helper)` copies.
    docs: dict[tuple[str, str], str] = field(default_factory=dict)
    pending: list[Pending] = field(default_factory=list)
    newdocs: list[tuple[str, ast.Call, str]] = field(default_factory=list)  # module, call, path

    def assign(self, module: str, target: ast.expr, value: ast.expr) -> None:
        """Record `NAME = value` or `NAME["key"] = value` at module level."""
        if not isinstance(value, _STRINGISH):
            return
        if isinstance(target, ast.Name):
            self.assigned[(module, target.id)] = value
        elif (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
        ):
            self.items.setdefault((module, target.value.id), {})[target.slice.value] = value

    def newdoc(self, module: str, node: ast.stmt, path: str) -> bool:
        """Record `node` if it is an `add_newdoc(module, name, doc)` call (NumPy's)."""
        call = node.value if isinstance(node, ast.Expr) else None
        if not isinstance(call, ast.Call) or _called_name(call) != ADD_NEWDOC:
            return False
        if len(call.args) >= 3:
            self.newdocs.append((module, call, path))
        return True


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _cap(text: str) -> str:
    return text[:MAX_CHARS]


def percent(template: str, params: object) -> str:
    """`template % params` by text substitution: `%(name)s` from a dict, `%s` from a tuple
    or a single string, `%%`; a missing value is empty, flags and widths are ignored."""
    items = iter(params if isinstance(params, tuple) else (params,))

    def one(match: re.Match[str]) -> str:
        name, conversion = match.group(1), match.group(2)
        if conversion == "%" and name is None:
            return "%"
        if name is not None:
            found = params.get(name, "") if isinstance(params, dict) else ""
        else:
            found = next(items, "")
        return found if isinstance(found, str) else ""

    return _cap(_PERCENT.sub(one, template))


def brace_format(template: str, args: tuple[object, ...], kwargs: Mapping[str, object]) -> str:
    """`template.format(*args, **kwargs)` by text substitution (`{{` and `}}` unescaped); a
    missing value is empty, a format specification is ignored."""
    counter = iter(range(len(args)))

    def one(match: re.Match[str]) -> str:
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        key = match.group(1) or ""
        if key.isdigit() or not key:
            index = int(key) if key else next(counter, len(args))
            found = args[index] if index < len(args) else ""
        else:
            found = kwargs.get(key, "")
        return found if isinstance(found, str) else ""

    return _cap(_BRACES.sub(one, template))


class _Evaluator:
    def __init__(self, made: MadeDocs, docs: Mapping[tuple[str, str], str]) -> None:
        self.made = made
        self.docs = {**made.docs, **docs}  # (module, qualname) -> literal docstring
        self.pending = {(p.module, p.qualname): p for p in made.pending}
        self.components: dict[tuple[str, str], list[str] | None] = {}
        # Items written into a dict another module imported (`_shared_docs["x"] = ...` in
        # `frame.py` adds to `pandas.core.shared_docs._shared_docs`): kept under its origin.
        self.items: dict[tuple[str, str], dict[str, tuple[str, ast.expr]]] = {}
        for (module, name), entries in made.items.items():
            origin = self.origin(module, name)
            bucket = self.items.setdefault(origin, {})
            for key, value in entries.items():
                bucket[key] = (module, value)

    def origin(self, module: str, name: str) -> tuple[str, str]:
        """Where `name` of `module` comes from, following `from x import name` edges."""
        for _ in range(MAX_DEPTH):
            source = self.made.imported.get((module, name))
            if source is None:
                break
            module, name = source
        return module, name

    def name(self, module: str, name: str, depth: int) -> object | None:
        module, name = self.origin(module, name)
        entries = self.items.get((module, name))
        expr = self.made.assigned.get((module, name))
        value = self.value(module, expr, depth + 1) if expr is not None else None
        if entries:
            merged: dict[str, object] = dict(value) if isinstance(value, dict) else {}
            for key, (where, item) in entries.items():
                merged.setdefault(key, self.value(where, item, depth + 1))
            return merged
        return value

    def value(self, module: str, node: ast.expr, depth: int = 0) -> object | None:
        """The string, dict or tuple `node` evaluates to, or None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            return _cap(node.value) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts = [self.value(module, v, depth + 1) for v in node.values]
            return _cap("".join(p for p in parts if isinstance(p, str)))
        if isinstance(node, ast.FormattedValue):
            return self.value(module, node.value, depth + 1)
        if isinstance(node, ast.Name):
            return self.name(module, node.id, depth)
        if isinstance(node, ast.BinOp):
            return self._binop(module, node, depth)
        if isinstance(node, ast.Subscript):
            container = self.value(module, node.value, depth + 1)
            key = self.value(module, node.slice, depth + 1)
            if isinstance(container, dict) and isinstance(key, str):
                return container.get(key)
            return None
        if isinstance(node, ast.Dict):
            out: dict[str, object] = {}
            for key_node, item in zip(node.keys, node.values, strict=True):
                if key_node is None:  # `**other`
                    other = self.value(module, item, depth + 1)
                    out.update(other if isinstance(other, dict) else {})
                elif isinstance(key_node, ast.Constant) and isinstance(key_node.value, str):
                    out[key_node.value] = self.value(module, item, depth + 1)
            return out
        if isinstance(node, ast.Tuple):
            return tuple(self.value(module, item, depth + 1) for item in node.elts)
        if isinstance(node, ast.Call):
            return self._call(module, node, depth)
        return None

    def _binop(self, module: str, node: ast.BinOp, depth: int) -> object | None:
        left = self.value(module, node.left, depth + 1)
        if isinstance(node.op, ast.Add):
            right = self.value(module, node.right, depth + 1)
            if not isinstance(left, str) and not isinstance(right, str):
                return None
            return _cap(_text(left) + _text(right))
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            return percent(left, self.value(module, node.right, depth + 1))
        return None

    def _call(self, module: str, node: ast.Call, depth: int) -> object | None:
        args = tuple(self.value(module, a, depth + 1) for a in node.args)
        kwargs = self.keywords(module, node, depth)
        called = _called_name(node)
        if called == "dedent" and args and isinstance(args[0], str):
            return textwrap.dedent(args[0])
        if called == "dict":
            return kwargs
        if not isinstance(node.func, ast.Attribute):
            return None
        target = self.value(module, node.func.value, depth + 1)
        if not isinstance(target, str):
            return None
        if called == "format":
            return brace_format(target, args, kwargs)
        if called == "replace" and len(args) >= 2 and isinstance(args[0], str) and args[0]:
            return _cap(target.replace(args[0], _text(args[1])))
        if called in {"strip", "lstrip", "rstrip"} and not args:
            return str(getattr(target, called)())
        return None

    def keywords(self, module: str, node: ast.Call, depth: int) -> dict[str, object]:
        out: dict[str, object] = {}
        for keyword in node.keywords:
            found = self.value(module, keyword.value, depth + 1)
            if keyword.arg is None:  # `**params`
                out.update(found if isinstance(found, dict) else {})
            else:
                out[keyword.arg] = found
        return out

    def template_of(self, item: Pending, node: ast.expr, depth: int) -> list[str]:
        """What `@doc(node)` adds: a string, or another object's docs (its own `@doc`
        templates when it has them, as pandas keeps them, else its docstring)."""
        found = self.value(item.module, node, depth + 1)
        if isinstance(found, str):
            return [found]
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return []
        where, first = self.origin(item.module, node.id)
        owner = item.qualname.rpartition(".")[0]
        keys = [
            (where, ".".join(filter(None, [first, *parts]))),
            (f"{where}.{first}", ".".join(parts)),  # `algorithms.factorize`: a module's
        ]
        if owner and not parts:  # `@doc(argmax)` in a class body: the class's method
            keys.insert(0, (item.module, f"{owner}.{node.id}"))
        for key in keys:
            components = self.components_of(key, depth + 1)
            if components is not None:
                return components
            if doc := self.docs.get(key):
                return [textwrap.dedent(doc)]
        return []

    def components_of(self, key: tuple[str, str], depth: int) -> list[str] | None:
        """The unformatted templates a `@doc`-decorated definition keeps (None if none)."""
        if key in self.components:
            return self.components[key]
        self.components[key] = None  # a cycle reads as no templates
        pending = self.pending.get(key)
        if pending is None or depth > MAX_DEPTH:
            return None
        self.evaluate(pending, depth)
        return self.components[key]

    def evaluate(self, item: Pending, depth: int = 0) -> str:
        """The docstring `item`'s decorators leave it with, applied bottom-up."""
        doc = item.doc
        key = (item.module, item.qualname)
        for decorator in reversed(item.decorators):
            called = _called_name(decorator)
            if called == "Appender" and decorator.args:
                addendum = _text(self.value(item.module, decorator.args[0], depth + 1))
                join = self.keywords(item.module, decorator, depth).get("join", "")
                doc = textwrap.dedent(_text(join).join([doc or "", addendum]))
            elif called == "Substitution" and doc:
                args = tuple(self.value(item.module, a, depth + 1) for a in decorator.args)
                doc = percent(doc, args or self.keywords(item.module, decorator, depth))
            elif called == "doc":
                own = [textwrap.dedent(doc)] if doc else []
                templates = own + [
                    part for arg in decorator.args for part in self.template_of(item, arg, depth)
                ]
                self.components[key] = templates
                params = self.keywords(item.module, decorator, depth)
                doc = "".join(brace_format(t, (), params) for t in templates)
        return _cap(doc or "")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _signature(name: str, doc: str) -> tuple[str, str]:
    """NumPy's docs start with the call (`zeros(shape, dtype=float, ...)`, `a.reshape(...)`):
    (that signature, the rest), or ("", doc)."""
    lines = textwrap.dedent(doc).strip().splitlines()
    if not lines or not re.match(rf"^(?:\w+\.)?{re.escape(name)}\(", lines[0]):
        return "", doc
    taken: list[str] = []
    for line in lines[:4]:
        taken.append(line.strip())
        joined = " ".join(taken)
        if joined.count("(") <= joined.count(")"):
            rest = "\n".join(lines[len(taken) :])
            return joined if len(joined) <= 300 else joined[:297] + "...", rest
    return "", doc


def _newdocs(made: MadeDocs, ev: _Evaluator) -> list[MadeDef]:
    """Definitions of the `add_newdoc(module, name, doc | (attr, doc) | [(attr, doc)...])`
    calls: a name that gets attributes documented is a class, its attributes methods when
    their docs start with a call, else properties."""
    out: list[MadeDef] = []
    owners: set[tuple[str, str]] = set()
    plain: list[tuple[str, str, str, str]] = []
    for where, call, path in made.newdocs:
        module = ev.value(where, call.args[0])
        name = ev.value(where, call.args[1])
        if not isinstance(module, str) or not isinstance(name, str):
            continue
        body = call.args[2]
        pairs = body.elts if isinstance(body, ast.List) else [body]
        for pair in pairs:
            if isinstance(pair, ast.Tuple) and len(pair.elts) == 2:
                attr, doc = ev.value(where, pair.elts[0]), ev.value(where, pair.elts[1])
                if isinstance(attr, str) and isinstance(doc, str) and doc.strip():
                    owners.add((module, name))
                    signature, rest = _signature(attr, doc)
                    kind = "method" if signature else "property"
                    shown = signature or f"{attr} (property)"
                    out.append(MadeDef(module, f"{name}.{attr}", kind, shown, rest, path))
            else:
                doc = ev.value(where, pair)
                if isinstance(doc, str) and doc.strip():
                    plain.append((module, name, doc, path))
    for module, name, doc, path in plain:
        signature, rest = _signature(name, doc)
        kind = "class" if (module, name) in owners else "function"
        out.append(MadeDef(module, name, kind, signature or f"{name}(...)", rest, path))
    return out


def resolve(made: MadeDocs, docs: Mapping[tuple[str, str], str]) -> list[MadeDef]:
    """The definitions whose docstrings this distribution writes at import time; `docs`:
    the literal docstrings of its other definitions, by (module, qualname)."""
    ev = _Evaluator(made, docs)
    out: list[MadeDef] = []
    for item in made.pending:
        doc = ev.evaluate(item)
        if doc.strip():
            out.append(
                MadeDef(item.module, item.qualname, item.kind, item.signature, doc, item.path)
            )
    return out + _newdocs(made, ev)
