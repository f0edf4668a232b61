"""Read documentation from `.py` sources with `ast`, never importing them.

Module, class, function and method docstrings and signatures become `Definition`s of a
`Group`; `from X import name` / `from X import *` statements (and `class A(_mod._Base)`)
become its re-export edges, resolved to public names later by `names`. Functions whose
docstring a decorator writes (pandas' `@Appender`), NumPy's `add_newdoc` calls and the
module-level strings they are made of are kept for `made_docs`, which evaluates them once
every module of the distribution is read.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator
from pathlib import Path

from codeweaver.sources.installed_docs.made_docs import DOC_DECORATORS, Pending
from codeweaver.sources.installed_docs.model import CollectorOptions, normalise_doc
from codeweaver.sources.installed_docs.names import (
    MODULE_ALIASES,
    Definition,
    Group,
    is_public,
)

logger = logging.getLogger(__name__)


def _walk_body(body: list[ast.stmt], typing_only: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """(statement, inside `if TYPE_CHECKING:`) for a body, descending into `if`/`try` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            checking = "TYPE_CHECKING" in ast.unparse(node.test)
            yield from _walk_body(node.body, typing_only or checking)
            yield from _walk_body(node.orelse, typing_only)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from _walk_body(node.body, typing_only)
            for handler in node.handlers:
                yield from _walk_body(handler.body, typing_only)
            yield from _walk_body(node.orelse, typing_only)
            yield from _walk_body(node.finalbody, typing_only)
        else:
            yield node, typing_only


def _literal_all(tree: ast.Module) -> frozenset[str]:
    """The names of a literal `__all__ = [...]` (empty if absent or computed)."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(
                target := (node.targets[0] if isinstance(node, ast.Assign) else node.target),
                ast.Name,
            )
            and target.id == "__all__"
            and node.value is not None
        ):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return frozenset()
            if isinstance(value, list | tuple):
                return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _doc_decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
    """The decorators that write the docstring (`made_docs.DOC_DECORATORS`), top to bottom."""
    return [
        deco
        for deco in node.decorator_list
        if isinstance(deco, ast.Call)
        and (deco.func.id if isinstance(deco.func, ast.Name) else getattr(deco.func, "attr", ""))
        in DOC_DECORATORS
    ]


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names: set[str] = set()
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _arguments(node: ast.FunctionDef | ast.AsyncFunctionDef, drop_first: bool) -> str:
    args = node.args
    if drop_first:
        args = ast.arguments(
            posonlyargs=args.posonlyargs[1:],
            args=args.args[1:] if not args.posonlyargs else args.args,
            vararg=args.vararg,
            kwonlyargs=args.kwonlyargs,
            kw_defaults=args.kw_defaults,
            kwarg=args.kwarg,
            defaults=args.defaults,
        )
        total = len(args.posonlyargs) + len(args.args)
        args.defaults = args.defaults[-total:] if total else []
    text = ast.unparse(args)
    return text if len(text) <= 300 else text[:297] + "..."


class _ModuleParser:
    def __init__(self, group: Group, module: str, is_package: bool, path: Path, max_doc: int):
        self.group, self.module, self.is_package = group, module, is_package
        self.path, self.max_doc = str(path), max_doc
        self.module_aliases: dict[str, str] = {}
        self.instances: dict[str, str] = {}  # `_inst = Random()` -> {"_inst": "Random"}
        self.pending: list[tuple[str, str]] = []  # (new name, qualname it refers to)
        self.defs: dict[str, Definition] = {}

    def parse(self, tree: ast.Module) -> None:
        if is_public(self.module):
            self._add("", "module", "", ast.get_docstring(tree))
        if self.module in MODULE_ALIASES:
            self.group.star.setdefault(self.module, []).append(MODULE_ALIASES[self.module])
        exported = _literal_all(tree)
        for node, typing_only in _walk_body(tree.body):
            if isinstance(node, ast.ImportFrom):
                # Lazy packages (pydantic, langchain) import under TYPE_CHECKING what their
                # `__getattr__` serves: trust those imports only for names listed in `__all__`.
                source = self._resolve(node)
                for alias in node.names if source else []:
                    name = alias.asname or alias.name
                    if not typing_only or name in exported or (name == "*" and exported):
                        self.group.add_edge(source, alias.name, self.module, name)
                    if not typing_only and alias.name != "*":  # docstring parts travel too
                        self.group.made.imported[(self.module, name)] = (source, alias.name)
            elif typing_only or self.group.made.newdoc(self.module, node, self.path):
                continue
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    self.module_aliases[alias.asname or top] = alias.name if alias.asname else top
                    if alias.asname:  # `import pandas.core.algorithms as algos`
                        self.group.made.imported[(self.module, alias.asname)] = (alias.name, "")
            elif isinstance(node, ast.ClassDef):
                self._class(node, "")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(node, "", in_class=False)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                self.group.made.assign(self.module, target, node.value)
                if isinstance(target, ast.Name):
                    self._assignment(target.id, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self.group.made.assign(self.module, node.target, node.value)
        for name, qualname in self.pending:
            self._copy(qualname, name)

    def _assignment(self, name: str, value: ast.expr) -> None:
        """`fromstring = XML`, `choice = _inst.choice`, `get_ident = _thread.get_ident`."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            self.instances[name] = value.func.id
        elif name.startswith("_"):
            return
        elif isinstance(value, ast.Name):
            self.pending.append((name, value.id))
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            owner = value.value.id
            if owner in self.instances:
                self.pending.append((name, f"{self.instances[owner]}.{value.attr}"))
            elif owner in self.module_aliases:
                self.group.add_edge(self.module_aliases[owner], value.attr, self.module, name)

    def _copy(self, qualname: str, name: str) -> None:
        original = self.defs.get(qualname)
        if original is None or name in self.defs:
            return
        leaf = qualname.rpartition(".")[2]
        signature = original.signature
        if signature.startswith(leaf + "("):
            signature = name + signature[len(leaf) :]
        kind = "function" if original.kind == "method" else original.kind
        self.defs[name] = Definition(self.module, name, kind, signature, original.doc, self.path)
        self.group.defs.append(self.defs[name])

    def _resolve(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.module.split(".")
        if not self.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        if not base:
            return ""
        return ".".join([*base, node.module] if node.module else base)

    def _add(self, qualname: str, kind: str, signature: str, doc: str | None) -> None:
        if doc and doc.strip():
            text = normalise_doc(doc)[: self.max_doc]
            definition = Definition(self.module, qualname, kind, signature, text, self.path)
            self.defs.setdefault(qualname, definition)
            self.group.defs.append(definition)

    def _base(self, base: ast.expr) -> tuple[str, str] | None:
        """Where a base class is named from: (this module, `NDFrame`), or the module of
        `generic.NDFrame` (`from pandas.core import generic`, `import x as generic`)."""
        if isinstance(base, ast.Name):
            return self.module, base.id
        if not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)):
            return None
        owner = base.value.id
        if owner in self.module_aliases:
            return self.module_aliases[owner], base.attr
        source = self.group.made.imported.get((self.module, owner))
        if source is None:
            return None
        return (f"{source[0]}.{source[1]}" if source[1] else source[0]), base.attr

    def _class(self, node: ast.ClassDef, prefix: str) -> None:
        # A private top-level class has no page, but its members do under a public
        # subclass (`argparse._ActionsContainer.add_argument` is `ArgumentParser`'s).
        private = node.name.startswith("_")
        if private and prefix:
            return
        qualname = prefix + node.name
        if not prefix:
            self.group.classes.add((self.module, node.name))
            for base in node.bases:
                if (found := self._base(base)) is not None:
                    self.group.bases.append(((self.module, node.name), found))
        if not prefix and not private:  # `class TextIOBase(_io._TextIOBase)`: its docs
            for base in node.bases:
                if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                    source = self.module_aliases.get(base.value.id, "")
                    # Only the public face of the same class: `class matrix(N.ndarray)` is a
                    # subclass, and `ndarray`'s docs are not `numpy.matrix`'s.
                    if source and not is_public(source) and base.attr.strip("_") == node.name:
                        self.group.add_edge(source, base.attr, self.module, node.name)
        init = next(
            (
                n
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "__init__"
            ),
            None,
        )
        if init is not None:
            signature = f"{node.name}({_arguments(init, drop_first=True)})"
        else:
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            signature = f"class {node.name}({bases})" if bases else f"class {node.name}"
        doc = ast.get_docstring(node) or (ast.get_docstring(init) if init else None)
        if not private:
            self._add(qualname, "class", signature, doc)
        for child, _ in _walk_body(node.body):
            if isinstance(child, ast.Assign) and isinstance(child.targets[0], ast.Subscript):
                # `_shared_docs["pivot_table"] = ...` in a class body fills the module's dict
                self.group.made.assign(self.module, child.targets[0], child.value)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(child, qualname + ".", in_class=True)
            elif isinstance(child, ast.ClassDef):
                self._class(child, qualname + ".")

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, *, in_class: bool
    ) -> None:
        decorators = _decorator_names(node)
        if decorators & {"overload", "setter", "deleter"}:
            return
        if node.name.startswith("_"):  # no page, but `@doc(_helper)` may copy its docstring
            if (doc := ast.get_docstring(node, clean=False)) is not None:
                self.group.made.docs[(self.module, prefix + node.name)] = doc
            return
        if decorators & {"property", "cached_property"}:
            kind, signature = "property", f"{node.name} (property)"
        else:
            drop = in_class and "staticmethod" not in decorators
            signature = f"{node.name}({_arguments(node, drop_first=drop)})"
            if node.returns is not None:
                signature += f" -> {ast.unparse(node.returns)}"[:120]
            if isinstance(node, ast.AsyncFunctionDef):
                signature = "async " + signature
            kind = "method" if in_class else "function"
        made = _doc_decorators(node)
        if made:  # its docstring is written at import time: `made_docs` evaluates it
            doc = ast.get_docstring(node, clean=False)
            qualname = prefix + node.name
            pending = Pending(self.module, qualname, kind, signature, doc, made, self.path)
            self.group.made.pending.append(pending)
            return
        self._add(prefix + node.name, kind, signature, ast.get_docstring(node))


def parse_file(
    group: Group, module: str, is_package: bool, path: Path, opts: CollectorOptions
) -> None:
    try:
        if path.stat().st_size > opts.max_file_bytes:
            logger.debug("skipping large file %s", path)
            return
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError) as exc:
        logger.debug("cannot parse %s: %s", path, exc)
        return
    _ModuleParser(group, module, is_package, path, opts.max_doc_chars).parse(tree)
