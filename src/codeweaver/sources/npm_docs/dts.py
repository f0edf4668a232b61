"""API documentation of TypeScript declaration files (`.d.ts`), parsed with tree-sitter.

Read: functions, classes (their methods and documented properties), interfaces (their
methods and documented properties), type aliases, enums, variables and namespaces, each
with its signature as written and its JSDoc comment (`{@link X}` reduced to its text). A
declaration tagged `@internal`, `@private`, `@hidden` or `@ignore`, and a `private` or
`protected` member, is not public API and is skipped.

In a module file (one with a top-level `import` or `export`) only what it exports is read:
declarations marked `export`, and those it names in `export { … }`, `export default X` or
`export = X` (with the namespace merged into that name). A file without either declares
globals, all read. Members of namespaces are all read, as TypeScript exports them
implicitly; so are `declare global` and `declare module "x"` blocks, whatever the file
exports (members named `x.member`, `node:x` as `x`; a relative `"../index"` augments the
package itself, as `@types/lodash` does: unprefixed).

Overloads are merged into one entry: their signatures one per line, their distinct docs.
The relative specifiers a file imports, re-exports or `/// <reference path>`s are returned
for the caller to read next (`entry_files`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

_LANGUAGE = Language(tree_sitter_typescript.language_typescript())
MAX_SIGNATURE_CHARS = 600
MAX_OVERLOADS = 6  # more overloads than this add length, not meaning
MAX_DEPTH = 12  # nested namespaces deeper than this are not API anyone browses
_HIDDEN = re.compile(r"^@(?:internal|private|hidden|ignore)\b", re.MULTILINE)
_FILE_DOC = re.compile(r"@(?:license|file|fileoverview|packageDocumentation|module)\b")
# The text after the target is taken whole and trimmed in Python (`_link_text`): three
# optional runs of spaces in a row (`\s*\|?\s*`) backtrack cubically on a long one. It
# stops at a brace, so an unclosed `{@link` is not scanned again from every later one.
_LINK = re.compile(r"\{@link(?:code|plain)?\s+([^}|\s]+)([\s|][^{}]*)?\}")
_REFERENCE = re.compile(r"^///\s*<reference\s+path\s*=\s*[\"']([^\"']+)[\"']")
_STAR = re.compile(r"^[ \t]*\*? ?")
_CLASSES = ("class_declaration", "abstract_class_declaration", "class")
_FUNCTIONS = ("function_signature", "function_declaration")
_METHODS = ("method_signature", "method_definition", "abstract_method_signature")
_PROPERTIES = ("public_field_definition", "property_signature")


@dataclass(frozen=True)
class ApiDoc:
    name: str  # qualified: "EventEmitter.once", "fs.readFile"
    kind: str  # see `model.API_KINDS`
    signature: str
    doc: str


@dataclass
class DtsFile:
    apis: list[ApiDoc] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # relative specifiers, in order


def parse_dts(source: bytes, max_doc_chars: int = 4000) -> DtsFile:
    """The public API declared in one `.d.ts` file and the files it refers to."""
    tree = Parser(_LANGUAGE).parse(source)
    reader = _Reader(max_doc_chars)
    reader.program(tree.root_node)
    return DtsFile(reader.finish(), list(dict.fromkeys(reader.references)))


# --------------------------------------------------------------------------- text


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _code(node: Node, end: int | None = None) -> str:
    """The node's source up to byte `end`, without comments, whitespace squeezed."""
    stop = node.end_byte if end is None else end
    source = node.text or b""
    cuts: list[tuple[int, int]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "comment" and current.start_byte < stop:
            cuts.append((current.start_byte - node.start_byte, current.end_byte - node.start_byte))
        elif current.start_byte < stop:
            stack.extend(current.children)
    kept, position = [], 0
    for start, finish in sorted(cuts):
        kept.append(source[position:start])
        position = max(position, finish)
    kept.append(source[position : stop - node.start_byte])
    return squeeze(b" ".join(kept).decode("utf-8", "replace"))


def squeeze(text: str, limit: int = MAX_SIGNATURE_CHARS) -> str:
    """One line: whitespace squeezed, no space inside brackets, no trailing `;` or comma."""
    text = " ".join(text.split())
    text = re.sub(r"([(<\[]) ", r"\1", text)
    text = re.sub(r",? ([)>\]])", r"\1", text)
    text = text.rstrip(" ;,")
    if len(text) > limit:
        text = text[:limit].rstrip() + " …"
    return text


def _link_text(match: re.Match[str]) -> str:
    """`{@link target | text}` or `{@link target text}` as its text, else its target."""
    text = (match.group(2) or "").strip().removeprefix("|").strip()
    return text or match.group(1)


def clean_jsdoc(comment: str, limit: int) -> str:
    """The text of a `/** … */` comment: stars and delimiters gone, links as their text."""
    body = comment[3:-2] if comment.endswith("*/") else comment[3:]
    lines = [_STAR.sub("", line).rstrip() for line in body.split("\n")]
    text = "\n".join(lines).strip()
    text = _LINK.sub(_link_text, text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    if len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit)
        text = text[: cut if cut > 0 else limit].rstrip() + " …"
    return text


def jsdoc(node: Node, limit: int) -> str:
    """The JSDoc comment right before `node` (skipping `;`/`,` and a few plain comments)."""
    previous = node.prev_sibling
    for _ in range(8):  # a JSDoc further up belongs to something else
        if previous is None:
            break
        if previous.type == "comment":
            text = _text(previous)
            if text.startswith("/**") and not text.startswith("/**/"):
                return "" if _FILE_DOC.search(text) else clean_jsdoc(text, limit)
        elif previous.is_named or previous.type not in (";", ","):
            return ""
        previous = previous.prev_sibling
    return ""


# --------------------------------------------------------------------------- reading


class _Reader:
    def __init__(self, max_doc_chars: int) -> None:
        self.limit = max_doc_chars
        self.references: list[str] = []
        self._apis: dict[tuple[str, str], tuple[list[str], list[str]]] = {}

    def finish(self) -> list[ApiDoc]:
        return [
            ApiDoc(name, kind, "\n".join(sigs[:MAX_OVERLOADS]), "\n\n".join(docs))
            for (name, kind), (sigs, docs) in self._apis.items()
        ]

    def add(self, name: str, kind: str, signature: str, doc: str) -> None:
        if not name:
            return
        sigs, docs = self._apis.setdefault((name, kind), ([], []))
        if signature and signature not in sigs:
            sigs.append(signature)
        if doc and doc not in docs:
            docs.append(doc)

    def program(self, root: Node) -> None:
        statements = root.named_children
        for node in statements:
            if node.type == "comment":
                found = _REFERENCE.match(_text(node))
                if found:
                    self.references.append(found.group(1))
            elif node.type in ("import_statement", "export_statement"):
                source = node.child_by_field_name("source")
                spec = _text(source).strip("\"'`")
                if spec.startswith(("./", "../")):
                    self.references.append(spec)
        is_module = any(n.type in ("import_statement", "export_statement") for n in statements)
        self.block(statements, "", _exported_names(statements) if is_module else None, 0)

    def block(
        self, statements: list[Node], prefix: str, exported: set[str] | None, depth: int
    ) -> None:
        """Read `statements`; with `exported`, only those exported or named in it."""
        if depth > MAX_DEPTH:
            return
        for statement in statements:
            if statement.type == "comment":
                continue
            doc = jsdoc(statement, self.limit)
            if _HIDDEN.search(doc):
                continue
            node, marked = _unwrap(statement)
            if node is None:
                continue
            if node.type == "statement_block":  # `declare global { … }`
                self.block(node.named_children, "", None, depth + 1)
                continue
            name = _declared_name(node)
            if node.type == "module":  # `declare module "x"`: ambient, always visible
                self.ambient_module(node, name, doc, depth)
                continue
            if exported is not None and not marked and name.split(".")[0] not in exported:
                continue
            self.declaration(node, prefix, name, doc, depth)

    def declaration(self, node: Node, prefix: str, name: str, doc: str, depth: int) -> None:
        qualified = prefix + name
        kind = node.type
        if kind in _FUNCTIONS:
            body = node.child_by_field_name("body")
            self.add(qualified, "function", _code(node, body.start_byte if body else None), doc)
        elif kind in _CLASSES or kind == "interface_declaration":
            self.owner(node, qualified, doc)
        elif kind == "type_alias_declaration":
            self.add(qualified, "type", _code(node), doc)
        elif kind == "enum_declaration":
            body = node.child_by_field_name("body")
            members = [_text(m.child_by_field_name("name") or m) for m in _named(body)]
            signature = _code(node, body.start_byte if body else None)
            self.add(qualified, "enum", f"{signature} {{ {', '.join(members)} }}", doc)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for declarator in _named(node, "variable_declarator"):
                self.variable(declarator, prefix, _text(node.child(0)), doc)
        elif kind == "internal_module":
            body = node.child_by_field_name("body")
            if doc:
                self.add(qualified, "namespace", f"namespace {qualified}", doc)
            if body is not None:
                self.block(body.named_children, qualified + ".", None, depth + 1)

    def ambient_module(self, node: Node, name: str, doc: str, depth: int) -> None:
        """`declare module "fs" { … }` names its members `fs.x` (`node:fs` too: code
        imports both as `fs`); a relative one augments the package itself: no prefix."""
        body = node.child_by_field_name("body")
        prefix = "" if name.startswith(".") else name.removeprefix("node:") + "."
        if doc and prefix:
            self.add(prefix[:-1], "namespace", f'module "{name}"', doc)
        if body is not None:
            self.block(body.named_children, prefix, None, depth + 1)

    def variable(self, declarator: Node, prefix: str, keyword: str, doc: str) -> None:
        name = prefix + _text(declarator.child_by_field_name("name"))
        annotation = declarator.child_by_field_name("type")
        shape = annotation.named_children[0] if annotation and annotation.named_children else None
        kind = "function" if shape is not None and shape.type == "function_type" else "variable"
        self.add(name, kind, f"{keyword} {_code(declarator)}", doc)
        if shape is not None and shape.type == "object_type":
            self.members(shape, name)

    def owner(self, node: Node, name: str, doc: str) -> None:
        """A class or an interface, then its members."""
        kind = "interface" if node.type == "interface_declaration" else "class"
        self._apis.setdefault((name, kind), ([], []))  # listed before its members
        body = node.child_by_field_name("body")
        header = _code(node, body.start_byte if body else None)
        extra = self.members(body, name) if body is not None else []
        inline = _code(body) if kind == "interface" and body is not None else ""
        if inline and len(inline) <= 300:  # a short interface reads best whole
            header, extra = f"{header} {inline}", []
        self.add(name, kind, "\n".join([header, *extra]), doc)

    def members(self, body: Node, owner: str) -> list[str]:
        """Add the public members of a class, interface or object type; returns the
        owner's constructor, call and construct signatures."""
        extra: list[str] = []
        for member in body.named_children:
            if member.type in ("call_signature", "construct_signature"):
                extra.append(_code(member))
                continue
            if member.type not in _METHODS and member.type not in _PROPERTIES:
                continue
            if _text(_first(member, "accessibility_modifier")) in ("private", "protected"):
                continue
            label = _text(member.child_by_field_name("name"))
            if not label or label.startswith(("#", "[")):
                continue
            doc = jsdoc(member, self.limit)
            if _HIDDEN.search(doc):
                continue
            if label == "constructor":
                extra.append(_code(member))
                continue
            method = member.type in _METHODS or _is_function_valued(member)
            if method or doc:  # an undocumented field is a name and a type, nothing more
                name = f"{owner}.{label.strip(chr(34) + chr(39))}"
                self.add(name, "method" if method else "property", _code(member), doc)
        return extra


def _named(node: Node | None, kind: str = "") -> list[Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.type != "comment" and (not kind or c.type == kind)]


def _first(node: Node, kind: str) -> Node | None:
    return next((c for c in node.children if c.type == kind), None)


def _is_function_valued(member: Node) -> bool:
    annotation = member.child_by_field_name("type")
    return bool(annotation and any(c.type == "function_type" for c in annotation.named_children))


def _unwrap(statement: Node) -> tuple[Node | None, bool]:
    """The declaration a statement holds (under `export` and `declare`), and whether it is
    marked `export`; None for statements that declare nothing."""
    node: Node | None = statement
    marked = statement.type == "export_statement"
    if marked:
        node = statement.child_by_field_name("declaration")
    if node is None:
        return None, False
    if node.type == "ambient_declaration":
        inner = _named(node)
        return (inner[0] if inner else None), marked
    return node, marked


def _declared_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    if node.type == "module" and name is not None:
        return _text(name).strip("\"'")
    return _text(name)


def _exported_names(statements: list[Node]) -> set[str]:
    """Local names a module exports without `export` on their declaration."""
    names: set[str] = set()
    for node in statements:
        if node.type != "export_statement" or node.child_by_field_name("declaration"):
            continue
        if node.child_by_field_name("source") is not None:
            continue  # re-exported from another file: read there
        value = node.child_by_field_name("value")
        if value is not None and value.type == "identifier":
            names.add(_text(value))
        for child in node.named_children:
            if child.type == "identifier":  # `export = X`
                names.add(_text(child))
            elif child.type == "export_clause":
                names.update(_text(s.child_by_field_name("name")) for s in _named(child))
    return names
