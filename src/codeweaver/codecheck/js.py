"""Check a JavaScript or TypeScript block against the npm modules installed in the project:
names imported from a module that does not export them, and members of a module object
(`import * as fs`, `const fs = require("fs")`, a default import of a module without its
own default export) that it does not have.

Precision first: only modules whose exports are completely known (`npm_api`) are judged;
a module object whose name is bound more than once in the block (a parameter, a local of
the same name) is not followed; statements that do not parse are skipped, the rest of the
block is read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

from codeweaver.codecheck.findings import CodeReport, Finding
from codeweaver.codecheck.npm_api import ModuleExports, NpmApi

_TSX = Language(tree_sitter_typescript.language_tsx())
_TS = Language(tree_sitter_typescript.language_typescript())
# What any object has (`Object.prototype`), and what a function or class object has.
OBJECT_MEMBERS = frozenset({
    "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "toLocaleString", "toString", "valueOf",
})  # fmt: skip
FUNCTION_MEMBERS = frozenset({"apply", "bind", "call", "length", "name", "prototype", "caller",
                              "arguments"})  # fmt: skip
_BINDINGS = frozenset({
    "identifier", "shorthand_property_identifier_pattern",
})  # fmt: skip


@dataclass(frozen=True)
class JsUse:
    """`module` exports `name` (a named import, a destructured `require`, or a member of
    the module object), as written at `line` (1-based)."""

    module: str
    name: str
    line: int
    member: bool  # `fs.readFile`: a member of the module object
    default: bool = False  # a member of a default import


def parse_js(code: str) -> Node | None:
    """The syntax tree of `code` (JSX allowed, else TypeScript's generics), or None when
    neither grammar reads more than half of it as code."""
    best: Node | None = None
    best_errors = 0
    data = code.encode("utf-8", "replace")
    for language in (_TSX, _TS):
        root = Parser(language).parse(data).root_node
        errors = sum(1 for _ in _errors(root))
        if best is None or errors < best_errors:
            best, best_errors = root, errors
        if errors == 0:
            break
    if best is None:
        return None
    statements = [n for n in best.named_children if n.type != "comment"]
    broken = sum(n.type == "ERROR" or n.has_error for n in statements)
    return None if not statements or broken * 2 > len(statements) else best


def _errors(node: Node) -> Iterator[Node]:
    if node.type == "ERROR" or node.is_missing:
        yield node
        return
    if node.has_error:
        for child in node.children:
            yield from _errors(child)


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _module_of(string: Node | None) -> str:
    """The bare module specifier of an import's string ("" for a relative or odd one)."""
    spec = _text(string).strip("\"'`")
    if not spec or spec.startswith((".", "/", "~", "#")) or ":" in spec.removeprefix("node:"):
        return ""
    return spec


def _require(value: Node | None) -> str:
    """The module of `require("x")`, else ""."""
    if value is None or value.type != "call_expression":
        return ""
    function, arguments = (
        value.child_by_field_name("function"),
        value.child_by_field_name("arguments"),
    )
    if _text(function) != "require" or arguments is None:
        return ""
    args = [a for a in arguments.named_children if a.type != "comment"]
    return _module_of(args[0]) if len(args) == 1 and args[0].type == "string" else ""


def collect_js_uses(root: Node) -> list[JsUse]:
    """What the block uses of installed modules, in source order."""
    uses: list[JsUse] = []
    objects: dict[str, tuple[str, bool]] = {}  # local name → (module, a default import)
    bound: Counter[str] = Counter()
    members: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            continue
        if node.type == "import_statement" and not node.has_error:
            _import(node, uses, objects)  # then read on: its names are bindings too
        if node.type == "variable_declarator" and not node.has_error:
            name, module = (
                node.child_by_field_name("name"),
                _require(node.child_by_field_name("value")),
            )
            if module and name is not None and name.type == "identifier":
                objects[_text(name)] = (module, False)
            elif module and name is not None and name.type == "object_pattern":
                uses += _destructured(name, module)
        if node.type in _BINDINGS and _is_binding(node):
            bound[_text(node)] += 1
        if node.type == "member_expression":
            members.append(node)
        stack.extend(reversed(node.children))
    for node in members:
        target, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if target is None or prop is None or target.type != "identifier":
            continue
        if prop.type != "property_identifier":
            continue
        local = _text(target)
        if local in objects and bound[local] <= 1:
            module, default = objects[local]
            line = node.start_point[0] + 1
            uses.append(JsUse(module, _text(prop), line, True, default))
    return sorted(uses, key=lambda u: u.line)


def _import(node: Node, uses: list[JsUse], objects: dict[str, tuple[str, bool]]) -> None:
    line = node.start_point[0] + 1
    for child in node.named_children:
        if child.type == "import_require_clause":  # `import x = require("m")`
            ident = next((c for c in child.named_children if c.type == "identifier"), None)
            module = _module_of(next((c for c in child.named_children if c.type == "string"), None))
            if ident is not None and module:
                objects[_text(ident)] = (module, False)
    module = _module_of(node.child_by_field_name("source"))
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if not module or clause is None:
        return
    for part in clause.named_children:
        if part.type == "identifier":  # `import React from "react"`
            objects[_text(part)] = (module, True)
        elif part.type == "namespace_import":
            ident = next((c for c in part.named_children if c.type == "identifier"), None)
            if ident is not None:
                objects[_text(ident)] = (module, False)
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type == "import_specifier":
                    name = spec.child_by_field_name("name")
                    if name is not None and name.type == "identifier":
                        uses.append(JsUse(module, _text(name), line, False))


def _destructured(pattern: Node, module: str) -> list[JsUse]:
    """`const { a, b: c } = require("m")` uses `m.a` and `m.b`."""
    line = pattern.start_point[0] + 1
    found: list[JsUse] = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            found.append(JsUse(module, _text(child), line, False))
        elif child.type == "pair_pattern":
            key = child.child_by_field_name("key")
            if key is not None and key.type == "property_identifier":
                found.append(JsUse(module, _text(key), line, False))
        elif child.type == "object_assignment_pattern":
            left = child.child_by_field_name("left")
            if left is not None and left.type == "shorthand_property_identifier_pattern":
                found.append(JsUse(module, _text(left), line, False))
    return found


def _is_binding(node: Node) -> bool:
    """Whether this identifier declares a name (a variable, a parameter, a function…)."""
    parent = node.parent
    if parent is None:
        return False
    if node.type == "shorthand_property_identifier_pattern":
        return True
    field = {
        "variable_declarator": "name", "function_declaration": "name",
        "class_declaration": "name", "required_parameter": "pattern",
        "optional_parameter": "pattern", "catch_clause": "parameter",
        "import_specifier": "alias", "namespace_import": None, "import_clause": None,
        "formal_parameters": None, "arrow_function": "parameter",
        "import_require_clause": None, "array_pattern": None, "rest_pattern": None,
        "pair_pattern": "value", "for_in_statement": "left",
    }  # fmt: skip
    if parent.type not in field:
        return False
    wanted = field[parent.type]
    if parent.type == "import_specifier":
        # `import { a }` binds `a`; `import { a as b }` binds `b`.
        alias = parent.child_by_field_name("alias")
        return node == (alias or parent.child_by_field_name("name"))
    return wanted is None or parent.child_by_field_name(wanted) == node


def check_js(code: str, npm: NpmApi) -> CodeReport:
    """The findings of one JavaScript or TypeScript block."""
    root = parse_js(code)
    if root is None:
        return CodeReport((), 0, False)
    findings: dict[tuple[str, int], Finding] = {}
    checked = 0
    for use in collect_js_uses(root):
        exports = npm.exports(use.module)
        if exports is None or not exports.complete:
            continue
        if use.default and "default" in exports.names:
            continue  # the default export's own members are a type's: unknown
        checked += 1
        if _has(exports, use):
            continue
        finding = _finding(use, exports)
        findings.setdefault((finding.name, finding.line), finding)
    return CodeReport(tuple(findings.values()), checked, True)


def _has(exports: ModuleExports, use: JsUse) -> bool:
    if use.name in exports.names:
        return True
    if use.member and (use.name in OBJECT_MEMBERS or use.name.startswith("__")):
        return True
    return use.member and exports.callable_object and use.name in FUNCTION_MEMBERS


def _finding(use: JsUse, exports: ModuleExports) -> Finding:
    where = f"{exports.package} {exports.version}".strip()
    installed = f" in {where}, installed here" if where else ""
    name = f"{use.module}.{use.name}"
    message = f"`{use.module}` exports no `{use.name}`{installed}"
    return Finding(name, use.line, message, "missing", name, "", where)
