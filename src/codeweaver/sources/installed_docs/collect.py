"""Collect documentation entries from the Python installed on this machine.

Third-party code and ordinary stdlib modules are never imported: their `.py` files are
parsed with `ast` (module, class, function and method docstrings and signatures). Only
built-in and C-extension stdlib modules (which have no source) are imported and read with
`inspect`, minus a deny-list of modules with side effects. `pydoc_data.topics` (a plain dict)
supplies the language-reference topics (`for`, `with`, `typesseq`, ...).

Public names: a definition in a private module (`_io`, `_collections_abc`, `_pytest.x`) or in
a package's submodule is published under the name users import it by, following
`from X import name` / `from X import *` statements of public modules (and, for C base classes,
`class TextIOBase(_io._TextIOBase)`). The shortest public name wins; the others become aliases.
Definitions with no public name, no docstring, or a private (`_name`) name are left out.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import inspect
import logging
import os
import platform
import re
import sys
import sysconfig
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: (phase description, done, total) — called while a build is running.
ProgressCallback = Callable[[str, int, int], None]

#: Never parsed nor imported: easter eggs, GUIs, the IDE, test suites.
DENY_TOP_LEVEL = frozenset(
    {"antigravity", "this", "idlelib", "turtle", "turtledemo", "test", "_tkinter", "__main__"}
)
#: C modules never imported (terminal/GUI side effects, test helpers).
DENY_IMPORT = frozenset({"readline", "_curses", "_curses_panel", "_tkinter", "_ctypes_test"})
_TEST_MODULE = re.compile(r"^_?(test|xx)|_test$")
_SKIP_DIRS = frozenset({"test", "tests", "__pycache__", "site-packages", "dist-packages"})
#: Modules whose contents are documented under another name.
_MODULE_ALIASES = {"posixpath": "os.path"}
#: C modules re-exported wholesale by a differently named module.
_C_FACES = {"posix": "os", "nt": "os"}


@dataclass(frozen=True)
class CollectorOptions:
    """What to collect. Tests point `paths` at a fake site-packages and switch the rest off."""

    include_stdlib: bool = True
    include_builtin_modules: bool = True
    include_topics: bool = True
    include_distributions: bool = True
    #: Folders searched for `*.dist-info`; None = `sys.path` (what `importlib.metadata` uses).
    paths: tuple[Path, ...] | None = None
    #: Stdlib folder; None = `sysconfig.get_paths()["stdlib"]`.
    stdlib_dir: Path | None = None
    #: Source files larger than this are skipped (generated code, data tables).
    max_file_bytes: int = 800_000
    #: Docstrings are cut to this many characters (indexed and stored).
    max_doc_chars: int = 4000

    def key(self) -> dict[str, Any]:
        """The options that change the index content (part of the fingerprint)."""
        return {
            "stdlib": self.include_stdlib,
            "builtin": self.include_builtin_modules,
            "topics": self.include_topics,
            "dists": self.include_distributions,
            "stdlib_dir": str(self.stdlib_dir or ""),
            "max_file_bytes": self.max_file_bytes,
            "max_doc_chars": self.max_doc_chars,
        }


@dataclass(frozen=True)
class DistInfo:
    name: str
    version: str
    dist: metadata.Distribution

    @property
    def canonical(self) -> str:
        return re.sub(r"[-_.]+", "-", self.name).lower()


@dataclass
class _Def:
    module: str
    qualname: str  # "" for the module docstring itself
    kind: str
    signature: str
    doc: str
    path: str


@dataclass
class _Group:
    """Definitions and re-export edges of one distribution (or of the stdlib)."""

    c_modules: frozenset[str] = frozenset()
    defs: list[_Def] = field(default_factory=list)
    named: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    star: dict[str, list[str]] = field(default_factory=dict)

    def add_edge(self, src: str, name: str, dst: str, dst_name: str) -> None:
        """`dst` re-exports `src.name` as `dst_name` (`*` for a star import).

        Only re-exports that publish an implementation are followed: from a submodule into
        its package (`requests` <- `requests.api`), from a private module of the same family
        (`io` <- `_io`, `pytest` <- `_pytest.x`, `numpy` <- `numpy._core.x`), or `os` <-
        `posix`. Ordinary imports (`from itertools import *` in some module) are not aliases.
        `dst` may be private: chains (`numpy._core.fromnumeric` -> `numpy._core` -> `numpy`)
        are followed.
        """
        if src == "builtins" or (dst_name != "*" and dst_name.startswith("_")):
            return
        if not (
            src.startswith(dst + ".")
            or ((not is_public(src) or src in self.c_modules) and _same_family(src, dst))
            or _C_FACES.get(src) == dst
        ):
            return
        if name == "*":
            self.star.setdefault(src, []).append(dst)
        else:
            self.named.setdefault((src, name), []).append((dst, dst_name))


def _same_family(src: str, dst: str) -> bool:
    """`_io`/`io`, `_pytest.python`/`pytest`, `_collections_abc`/`collections.abc`..."""
    a, b = src.split(".")[0].strip("_"), dst.split(".")[0].strip("_")
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def is_public(module: str) -> bool:
    return bool(module) and not any(part.startswith("_") for part in module.split("."))


def python_version() -> str:
    return platform.python_version()


@dataclass(frozen=True)
class DocEntry:
    """One documented object (or language topic), as stored in the index metadata."""

    name: str  # public qualified name ("json.loads", "builtins.open") or topic label ("for")
    kind: str  # module | class | function | method | property | topic
    module: str  # public module the name lives in ("" for topics)
    signature: str
    doc: str  # normalised docstring, cut to `max_doc_chars`
    package: str  # "python" for the stdlib, else the canonical distribution name
    display: str  # "Python" or the distribution name as published
    version: str
    home: str = ""  # distribution documentation/home page ("" if none, or stdlib)
    path: str = ""  # source file ("" for C modules and topics)
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["aliases"] = list(self.aliases)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocEntry:
        values = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        values["aliases"] = tuple(str(a) for a in data.get("aliases", ()))
        for name in cls.__dataclass_fields__:
            if name != "aliases" and not isinstance(values.get(name, ""), str):
                raise ValueError(f"entry field {name!r} is not a string")
        return cls(**values)


_RULE_LINE = re.compile(r"^\s*([*=\-~^#])\1{3,}\s*$")
_SPACES = re.compile(r"[ \t]{2,}")


def normalise_doc(text: str) -> str:
    """Dedent, drop reST underline rows, squeeze blank lines and prose spaces.

    Indented lines (code examples, parameter tables) keep their inner spacing.
    """
    out: list[str] = []
    for raw in inspect.cleandoc(text.expandtabs(4)).splitlines():
        line = raw.rstrip()
        if _RULE_LINE.match(line):
            continue
        if not line:
            if out and out[-1]:
                out.append("")
            continue
        out.append(line if line[0] == " " else _SPACES.sub(" ", line))
    return "\n".join(out).strip()


# --------------------------------------------------------------------------- distributions


def list_distributions(options: CollectorOptions) -> list[DistInfo]:
    """Installed distributions (first one wins on duplicates), cheap: reads METADATA only."""
    if not options.include_distributions:
        return []
    if options.paths is None:
        found: Iterable[metadata.Distribution] = metadata.distributions()
    else:
        found = metadata.distributions(path=[str(p) for p in options.paths])
    seen: dict[str, DistInfo] = {}
    for dist in found:
        try:
            name, version = dist.name, dist.version
        except Exception:  # broken metadata: skip the distribution
            continue
        if not name or not version:
            continue
        info = DistInfo(name, version, dist)
        seen.setdefault(info.canonical, info)
    return sorted(seen.values(), key=lambda d: d.canonical)


def dist_url(dist: metadata.Distribution) -> str:
    """Project-URL Documentation, else Homepage (or Home-page), else ""."""
    meta = dist.metadata
    urls: dict[str, str] = {}
    for item in meta.get_all("Project-URL") or []:
        label, _, url = item.partition(",")
        urls.setdefault(re.sub(r"[^a-z]", "", label.lower()), url.strip())
    for label in ("documentation", "docs", "doc", "homepage", "home"):
        if urls.get(label):
            return urls[label]
    home = [u for u in meta.get_all("Home-page") or [] if u and u.upper() != "UNKNOWN"]
    return home[0].strip() if home else ""


def _dist_modules(info: DistInfo) -> Iterator[tuple[str, bool, Path]]:
    root = Path(str(info.dist.locate_file("")))
    for file in info.dist.files or []:
        parts = file.parts
        if not parts or file.suffix != ".py" or ".." in parts:
            continue
        module = _module_name(parts)
        if module is not None:
            yield module, parts[-1] == "__init__.py", root.joinpath(*parts)


def _module_name(parts: tuple[str, ...]) -> str | None:
    stem = parts[-1][:-3]
    names = list(parts[:-1]) + ([] if stem == "__init__" else [stem])
    if not names or not all(n.isidentifier() for n in names):
        return None
    if any(n in _SKIP_DIRS or n == "conftest" for n in names) or names[0] in DENY_TOP_LEVEL:
        return None
    if stem.startswith("test_") or stem.endswith("_test") or stem == "__main__":
        return None
    return ".".join(names)


# --------------------------------------------------------------------------- stdlib files


def stdlib_dir(options: CollectorOptions) -> Path:
    return options.stdlib_dir or Path(sysconfig.get_paths()["stdlib"])


def _stdlib_modules(root: Path) -> Iterator[tuple[str, bool, Path]]:
    known = sys.stdlib_module_names
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).parts
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d.isidentifier()
            and d not in _SKIP_DIRS
            and (rel or (d in known and d not in DENY_TOP_LEVEL))
            and (Path(dirpath, d, "__init__.py").exists())
        )
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            if not rel and (filename[:-3] not in known or filename[:-3] in DENY_TOP_LEVEL):
                continue
            module = _module_name((*rel, filename))
            if module is not None and module != "pydoc_data.topics":
                yield module, filename == "__init__.py", Path(dirpath, filename)


def _c_modules() -> list[str]:
    names = set(sys.builtin_module_names)
    dynload = Path(sysconfig.get_paths()["stdlib"]) / "lib-dynload"
    if dynload.is_dir():
        names.update(p.name.split(".")[0] for p in dynload.iterdir() if p.suffix == ".so")
    return sorted(
        n
        for n in names
        if n in sys.stdlib_module_names
        and n not in DENY_IMPORT
        and n not in DENY_TOP_LEVEL
        and not _TEST_MODULE.search(n)
    )


# --------------------------------------------------------------------------- ast parsing


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
    def __init__(self, group: _Group, module: str, is_package: bool, path: Path, max_doc: int):
        self.group, self.module, self.is_package = group, module, is_package
        self.path, self.max_doc = str(path), max_doc
        self.module_aliases: dict[str, str] = {}
        self.instances: dict[str, str] = {}  # `_inst = Random()` -> {"_inst": "Random"}
        self.pending: list[tuple[str, str]] = []  # (new name, qualname it refers to)
        self.defs: dict[str, _Def] = {}

    def parse(self, tree: ast.Module) -> None:
        if is_public(self.module):
            self._add("", "module", "", ast.get_docstring(tree))
        if self.module in _MODULE_ALIASES:
            self.group.star.setdefault(self.module, []).append(_MODULE_ALIASES[self.module])
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
            elif typing_only:
                continue
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    self.module_aliases[alias.asname or top] = alias.name if alias.asname else top
            elif isinstance(node, ast.ClassDef):
                self._class(node, "")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(node, "", in_class=False)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self._assignment(target.id, node.value)
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
        self.defs[name] = _Def(self.module, name, kind, signature, original.doc, self.path)
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
            definition = _Def(self.module, qualname, kind, signature, text, self.path)
            self.defs.setdefault(qualname, definition)
            self.group.defs.append(definition)

    def _class(self, node: ast.ClassDef, prefix: str) -> None:
        if node.name.startswith("_"):
            return
        qualname = prefix + node.name
        if not prefix:  # `class TextIOBase(_io._TextIOBase)`: publish the private base's docs
            for base in node.bases:
                if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                    source = self.module_aliases.get(base.value.id, "")
                    if source and not is_public(source):
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
        self._add(qualname, "class", signature, doc)
        for child, _ in _walk_body(node.body):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(child, qualname + ".", in_class=True)
            elif isinstance(child, ast.ClassDef):
                self._class(child, qualname + ".")

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, *, in_class: bool
    ) -> None:
        if node.name.startswith("_"):
            return
        decorators = _decorator_names(node)
        if decorators & {"overload", "setter", "deleter"}:
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
        self._add(prefix + node.name, kind, signature, ast.get_docstring(node))


def _parse_file(
    group: _Group, module: str, is_package: bool, path: Path, opts: CollectorOptions
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


# --------------------------------------------------------------------------- C modules


def _c_signature(name: str, obj: object, doc: str, *, method: bool) -> tuple[str, str]:
    """(signature, doc without a leading signature line)."""
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
        params = list(sig.parameters.values())
        if method and params and params[0].name in ("self", "cls", "type"):
            sig = sig.replace(parameters=params[1:])
        return f"{name}{sig}", doc
    except (TypeError, ValueError):
        pass
    first, _, rest = doc.partition("\n")
    if first.startswith(name + "(") or re.match(r"^[\w.]+\(.*\)", first):
        return first.strip(), rest.strip()
    return "", doc


def _inspect_c_module(group: _Group, module: str, opts: CollectorOptions) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(module)
    except Exception as exc:  # an optional C module that fails to load
        logger.debug("cannot import %s: %s", module, exc)
        return

    def add(qualname: str, kind: str, signature: str, doc: str) -> None:
        text = normalise_doc(doc)[: opts.max_doc_chars]
        if text.strip():
            group.defs.append(_Def(module, qualname, kind, signature, text, ""))

    if is_public(module) and isinstance(mod.__doc__, str):
        add("", "module", "", mod.__doc__)
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("__") or (name.startswith("_") and not isinstance(obj, type)):
            continue
        if isinstance(obj, type):
            doc = vars(obj).get("__doc__")
            if isinstance(doc, str):
                signature, doc = _c_signature(name, obj, doc, method=False)
                add(name, "class", signature or f"class {name}", doc)
            for member_name, member in sorted(vars(obj).items()):
                if member_name.startswith("_") or not inspect.isroutine(member):
                    continue
                member_doc = getattr(member, "__doc__", None)
                if isinstance(member_doc, str):
                    signature, member_doc = _c_signature(
                        member_name, member, member_doc, method=True
                    )
                    add(f"{name}.{member_name}", "method", signature, member_doc)
        elif inspect.isroutine(obj) and isinstance(obj.__doc__, str):
            signature, doc = _c_signature(name, obj, obj.__doc__, method=False)
            add(name, "function", signature, doc)


# --------------------------------------------------------------------------- public names


def _public_names(group: _Group, definition: _Def) -> list[tuple[str, str]]:
    """(module, full name) pairs under which `definition` is public, best first."""
    if not definition.qualname:
        return [(definition.module, definition.module)] if is_public(definition.module) else []
    top, _, rest = definition.qualname.partition(".")
    suffix = f".{rest}" if rest else ""
    found: list[tuple[str, str]] = []
    seen = {(definition.module, top)}
    stack = [(definition.module, top)]
    while stack:
        module, name = stack.pop()
        if is_public(module) and module not in _MODULE_ALIASES and not name.startswith("_"):
            found.append((module, f"{module}.{name}{suffix}"))
        targets = list(group.named.get((module, name), []))
        if not name.startswith("_"):
            targets += [(dst, name) for dst in group.star.get(module, [])]
        for target in targets:
            if target not in seen and len(seen) < 64:
                seen.add(target)
                stack.append(target)
    return sorted(set(found), key=lambda item: (item[1].count("."), len(item[1]), item[1]))


def _finalise(group: _Group, package: str, display: str, version: str, home: str) -> list[DocEntry]:
    best: dict[str, DocEntry] = {}
    for definition in group.defs:
        names = _public_names(group, definition)
        if not names:
            continue
        module, name = names[0]
        entry = DocEntry(
            name=name,
            kind=definition.kind,
            module=module,
            signature=definition.signature,
            doc=definition.doc,
            package=package,
            display=display,
            version=version,
            home=home,
            path=definition.path,
            aliases=tuple(n for _, n in names[1:]),
        )
        old = best.get(name)
        if old is not None:
            keep = entry if len(entry.doc) > len(old.doc) else old
            aliases = tuple(dict.fromkeys(old.aliases + entry.aliases))
            entry = DocEntry.from_dict({**keep.to_dict(), "aliases": list(aliases)})
        best[name] = entry
    return list(best.values())


# --------------------------------------------------------------------------- entry points


class _Progress:
    def __init__(self, callback: ProgressCallback | None, phase: str, total: int) -> None:
        self.callback, self.phase, self.total = callback, phase, total
        self.step = max(1, total // 100)
        self.done = 0
        self.report()

    def report(self) -> None:
        if self.callback is not None:
            self.callback(self.phase, self.done, self.total)

    def advance(self) -> None:
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            self.report()


def collect_entries(
    options: CollectorOptions, progress: ProgressCallback | None = None
) -> list[DocEntry]:
    """Every documentation entry the options select (slow: parses thousands of files)."""
    entries: list[DocEntry] = []
    version = python_version()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes etc. in parsed sources
        if options.include_stdlib or options.include_builtin_modules:
            c_modules = _c_modules() if options.include_builtin_modules else []
            group = _Group(c_modules=frozenset(c_modules))
            tracker = _Progress(progress, "Reading built-in modules", len(c_modules))
            for module in c_modules:
                _inspect_c_module(group, module, options)
                tracker.advance()
            files = list(_stdlib_modules(stdlib_dir(options))) if options.include_stdlib else []
            tracker = _Progress(progress, "Parsing the standard library", len(files))
            for module, is_package, path in files:
                _parse_file(group, module, is_package, path, options)
                tracker.advance()
            entries += _finalise(group, "python", "Python", version, "")
        if options.include_topics:
            entries += collect_topics(options)
        dists = list_distributions(options)
        work = [(info, m) for info in dists for m in _dist_modules(info)]
        tracker = _Progress(progress, "Parsing installed packages", len(work))
        for info in dists:
            group = _Group()
            for item in (m for i, m in work if i is info):
                _parse_file(group, *item, options)
                tracker.advance()
            home = dist_url(info.dist)
            entries += _finalise(group, info.canonical, info.name, info.version, home)
    logger.info("collected %d documentation entries", len(entries))
    return entries


def collect_topics(options: CollectorOptions) -> list[DocEntry]:
    """The language-reference topics behind `help("for")`, from `pydoc_data.topics`."""
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions strip pydoc_data
        return []
    version = python_version()
    return [
        DocEntry(
            name=label,
            kind="topic",
            module="",
            signature="",
            doc=normalise_doc(text)[: options.max_doc_chars],
            package="python",
            display="Python",
            version=version,
        )
        for label, text in sorted(topics.items())
    ]
