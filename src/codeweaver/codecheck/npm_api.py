"""What an npm module exports, read from the `.d.ts` files in the project's `node_modules`.

A module's exports are *complete* only when every declaration file they come from was
read: `export * from` a file or a package that cannot be found, an `export =` of a value
whose members are a type (`declare const axios: AxiosStatic`), or a types entry that is a
global script leave them incomplete, and the check then judges nothing about that module.

Where the types come from: the package's own types entry (`types`, `exports`, beside
`main`), else `@types/<name>`; Node's built-in modules (`fs`, `node:fs`) from the
`declare module "fs"` blocks of `@types/node`. A subpath (`react-dom/client`) is looked up
in the package's `exports` map, then as a file or folder of the package.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from codeweaver.sources.npm_docs.collect import exports_types, referenced_files, types_entries
from codeweaver.sources.npm_docs.discover import read_manifest, read_within
from codeweaver.sources.npm_docs.model import NpmOptions

logger = logging.getLogger(__name__)

_LANGUAGE = Language(tree_sitter_typescript.language_typescript())
# A package name, then an optional subpath: `@scope/name/sub`, `name/sub`.
_SPECIFIER = re.compile(
    r"(?P<package>(?:@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*)(?P<sub>/[\w./@~-]+)?"
)
_DECLARATIONS = frozenset({
    "function_signature", "function_declaration", "class_declaration",
    "abstract_class_declaration", "interface_declaration", "type_alias_declaration",
    "enum_declaration", "internal_module", "module",
})  # fmt: skip
_VARIABLES = frozenset({"lexical_declaration", "variable_declaration"})
MAX_FILES = 400  # declaration files read for one module: more is a bundle of everything
MAX_DEPTH = 12  # `export *` chains deeper than this are not followed (incomplete)


@dataclass
class ModuleExports:
    """The names a module exports (values and types alike); `complete`: all of them."""

    names: set[str] = field(default_factory=set)
    complete: bool = True
    # `export = X` where X is a function or a class merged with its namespace: its
    # members also include what every function object has (`name`, `call`, …).
    callable_object: bool = False
    package: str = ""  # the package the types were read from, with its version
    version: str = ""


@dataclass
class _File:
    """One declaration file: its statements' exports, and what `export =` names."""

    names: set[str] = field(default_factory=set)
    stars: list[str] = field(default_factory=list)  # `export * from "x"` specifiers
    equals: str = ""  # `export = X`
    is_module: bool = False
    # name → (members, callable) of the file's namespaces (merged), functions, classes
    namespaces: dict[str, set[str]] = field(default_factory=dict)
    callables: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)  # `declare const X: T` and the like
    ambient: dict[str, list[Node]] = field(default_factory=dict)  # `declare module "x"`


class NpmApi:
    """The exports of the modules a project's `node_modules` can give an import."""

    def __init__(self, node_modules: Path, options: NpmOptions | None = None) -> None:
        self.node_modules = node_modules
        self.options = options or NpmOptions()
        self._area = node_modules.resolve()
        self._cache: dict[str, ModuleExports | None] = {}
        self._builtins: dict[str, list[Node]] | None = None

    # ------------------------------------------------------------------ public

    def exports(self, specifier: str) -> ModuleExports | None:
        """The exports of `import … from specifier`; None when it is not installed or has
        no declaration files (nothing can be said about it)."""
        if specifier not in self._cache:
            self._cache[specifier] = None  # an `export *` cycle reads as unknown
            try:
                self._cache[specifier] = self._read(specifier, 0)
            except Exception:  # a declaration file the check cannot read: no verdict
                logger.warning("code check: cannot read the types of %s", specifier,
                               exc_info=True)  # fmt: skip
        return self._cache[specifier]

    # ------------------------------------------------------------------ resolving

    def _read(self, specifier: str, depth: int) -> ModuleExports | None:
        bare = specifier.removeprefix("node:")
        builtin = self._builtin(bare)
        if builtin is not None or specifier.startswith("node:"):
            if builtin is None:
                return None
            node = self._package_dir("@types/node")
            version = _version(node) if node else ""
            return self._from_block(bare, builtin, version)
        match = _SPECIFIER.fullmatch(specifier)
        if match is None:
            return None
        name, sub = match.group("package"), (match.group("sub") or "").strip("/")
        for package in (name, _types_name(name)):
            folder = self._package_dir(package)
            if folder is None:
                continue
            entry = self._entry(folder, sub)
            if entry is not None:
                exports = self._from_file(folder, entry, depth)
                # The version the user installed is the package's, not its `@types`'.
                runtime = self._package_dir(name) if package != name else folder
                exports.package = name if runtime is not None else package
                exports.version = _version(runtime or folder)
                return exports
        return None

    def _package_dir(self, name: str) -> Path | None:
        folder = self.node_modules / name
        try:
            real = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        return real if real.is_dir() and real.is_relative_to(self._area) else None

    def _entry(self, folder: Path, sub: str) -> str | None:
        """The declaration file (relative to `folder`) of the package or its subpath."""
        manifest = read_manifest(folder / "package.json", self._area, self.options) or {}
        if not sub:
            candidates = types_entries(manifest)
        else:
            exports: Any = manifest.get("exports")
            mapped = exports.get(f"./{sub}") if isinstance(exports, dict) else None
            candidates = []
            if mapped is not None:
                typed = exports_types({".": mapped})
                candidates += referenced_files("", typed) if typed else []
            candidates += referenced_files("", sub)
        return next((c for c in candidates if c and (folder / c).is_file()), None)

    def _builtin(self, name: str) -> list[Node] | None:
        """The body of `declare module "name"` in `@types/node`, if it declares one."""
        if self._builtins is None:
            self._builtins = {}
            folder = self._package_dir("@types/node")
            if folder is not None:
                for path in sorted(folder.glob("**/*.d.ts"))[:MAX_FILES]:
                    data = read_within(path, self._area, self.options.max_file_bytes)
                    if data is not None:
                        for module, body in _parse(data).ambient.items():
                            self._builtins.setdefault(module, []).extend(body)
        # `declare module "fs" { export * from "node:fs"; }`: either spelling names both.
        found = self._builtins.get(name, []) + self._builtins.get(f"node:{name}", [])
        return found or None

    # ------------------------------------------------------------------ reading

    def _from_file(self, folder: Path, entry: str, depth: int) -> ModuleExports:
        """The exports of the module whose types entry is `folder/entry`."""
        found = ModuleExports()
        seen: set[str] = set()
        pending = [(entry, depth)]
        first = True
        while pending:
            relative, level = pending.pop()
            if relative in seen:
                continue
            seen.add(relative)
            if level > MAX_DEPTH or len(seen) > MAX_FILES:
                found.complete = False
                continue
            data = read_within(folder / relative, self._area, self.options.max_file_bytes)
            if data is None:
                found.complete = False
                continue
            parsed = _parse(data)
            if not parsed.is_module:
                # A global script declares no module; `declare module "x"` in it may.
                found.complete = False
                return found
            if parsed.equals:
                if not first:  # `export *` of an `export =` module: not ES exports
                    found.complete = False
                    continue
                _equals(parsed, found)
                continue
            # `export *` never re-exports a default.
            found.names |= parsed.names if first else parsed.names - {"default"}
            first = False
            for star in parsed.stars:
                if star.startswith("."):
                    option = self._local(folder, posixpath.dirname(relative), star)
                    if option is None:
                        found.complete = False
                    else:
                        pending.append((option, level + 1))
                else:
                    other = self.exports(star)
                    if other is None or not other.complete:
                        found.complete = False
                    else:
                        found.names |= other.names - {"default"}
        return found

    def _local(self, folder: Path, base: str, spec: str) -> str | None:
        for option in referenced_files(base, spec):
            if option and (folder / option).is_file():
                return option
        return None

    def _from_block(self, name: str, body: list[Node], version: str) -> ModuleExports:
        """The exports of an ambient `declare module "x" { … }` (all it declares: an
        ambient module exports its declarations implicitly)."""
        parsed = _File(is_module=True)
        for statement in body:
            _statement(statement, parsed, ambient=True)
        found = ModuleExports(package="@types/node", version=version)
        if parsed.equals:
            _equals(parsed, found)
            return found
        found.names = parsed.names
        for star in parsed.stars:
            if star.removeprefix("node:") == name:
                continue
            other = None if star.startswith(".") else self.exports(star)
            if other is None or not other.complete:
                found.complete = False
            else:
                found.names |= other.names - {"default"}
        return found


def _equals(parsed: _File, found: ModuleExports) -> None:
    """`export = X`: the module is X; its names are X's namespace members."""
    target = parsed.equals
    if target in parsed.values or target not in parsed.namespaces:
        found.complete = False  # a value typed elsewhere: its members are a type's
        return
    found.names |= parsed.namespaces[target]
    found.callable_object = target in parsed.callables


def _types_name(name: str) -> str:
    """`@types/x` for `x`, `@types/scope__x` for `@scope/x`."""
    return "@types/" + name.removeprefix("@").replace("/", "__")


def _version(folder: Path) -> str:
    try:
        value = json.loads((folder / "package.json").read_text("utf-8")).get("version", "")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------- parsing


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _parse(data: bytes) -> _File:
    root = Parser(_LANGUAGE).parse(data).root_node
    parsed = _File()
    statements = [n for n in root.named_children if n.type != "comment"]
    parsed.is_module = any(n.type in ("import_statement", "export_statement") for n in statements)
    for statement in statements:
        _statement(statement, parsed, ambient=not parsed.is_module)
    return parsed


def _statement(node: Node, parsed: _File, *, ambient: bool) -> None:
    """Record what one top-level statement exports or declares."""
    if node.type == "export_statement":
        _export(node, parsed)
        return
    if node.type == "expression_statement":  # `declare module "x"` parses as one at times
        children = node.named_children
        node = children[0] if children else node
    for name, declaration in _declared(node):
        if declaration.type == "module":
            body = declaration.child_by_field_name("body")
            parsed.ambient.setdefault(name, []).extend(body.named_children if body else [])
            continue
        _remember(declaration, name, parsed)
        if ambient:
            parsed.names.add(name)


def _export(node: Node, parsed: _File) -> None:
    children = [c.type for c in node.children]
    source = node.child_by_field_name("source")
    declaration = node.child_by_field_name("declaration")
    if "default" in children:
        parsed.names.add("default")
        return
    if declaration is not None:
        for name, inner in _declared(declaration):
            _remember(inner, name, parsed)
            parsed.names.add(name)
        return
    if "=" in children and "import_alias" not in children:  # `export = X`
        value = next((c for c in node.named_children if c.type == "identifier"), None)
        parsed.equals = _text(value) or "?"
        return
    if "as" in children and "namespace" in children:  # `export as namespace X` (UMD)
        return
    for child in node.named_children:
        if child.type == "export_clause":
            for spec in child.named_children:
                if spec.type == "export_specifier":
                    alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                    parsed.names.add(_text(alias))
        elif child.type == "namespace_export":  # `export * as x from …`
            ident = next((c for c in child.named_children if c.type == "identifier"), None)
            parsed.names.add(_text(ident))
    if "*" in children and source is not None:
        parsed.stars.append(_text(source).strip("\"'`"))


def _declared(node: Node) -> list[tuple[str, Node]]:
    """(name, declaration) of what a statement declares (under `declare`)."""
    if node.type == "ambient_declaration":
        inner = [c for c in node.named_children if c.type != "comment"]
        if not inner:
            return []
        node = inner[0]
        if node.type == "statement_block":  # `declare global { … }`
            return []
    if node.type == "import_alias":  # `export import a = b.c`
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        return [(_text(ident), node)] if ident is not None else []
    if node.type in _VARIABLES:
        return [(_text(d.child_by_field_name("name")), node)
                for d in node.named_children if d.type == "variable_declarator"]  # fmt: skip
    if node.type in _DECLARATIONS:
        name = node.child_by_field_name("name")
        text = _text(name)
        return [(text.strip("\"'") if node.type == "module" else text, node)] if text else []
    return []


def _remember(node: Node, name: str, parsed: _File) -> None:
    """Note a declaration `export = X` may name: namespaces merge, functions and classes
    make the object callable, variables make its members a type's."""
    if node.type == "internal_module":
        body = node.child_by_field_name("body")
        inner = _File()
        for statement in body.named_children if body else []:
            if statement.type == "export_statement":
                _export(statement, inner)
            else:
                _statement(statement, inner, ambient=True)
        parsed.namespaces.setdefault(name, set()).update(inner.names - {"default"})
    elif node.type in ("function_signature", "function_declaration", "class_declaration",
                       "abstract_class_declaration"):  # fmt: skip
        parsed.callables.add(name)
    elif node.type in _VARIABLES:
        parsed.values.add(name)
