"""Which APIs a reference snippet uses, and whether a documented name is one of them.

The hit rule of `eval retrieval`: a result documents an API the snippet uses when

1. its kind is function, method, class or property (modules and language topics never count),
2. the last component of its qualified name equals a name the snippet calls or reads as an
   attribute (`df.duplicated()` -> `duplicated`), or a builtin it passes as a value
   (`map(str, x)` -> `str`); `print` and the `list(...)` 2to3 wrapped around `map(...)` or
   `d.items()` do not count, and
3. its top-level module is one that use may come from (a builtin function never stands for
   a method: `x.all()` is not `all(...)`):
   * an attribute of a module (`np.where`, `os.path.getctime`): that module only (`np` is
     `numpy`, `pd` `pandas`... see `MODULE_ALIASES`; `import x as y` in the snippet counts);
   * an attribute of anything else (`s.split()`, `df.apply()`): `builtins` (str, list, dict
     methods), every module the snippet refers to, and the module a variable's conventional
     name implies (`df` -> pandas, `soup` -> bs4, `my_datetime` -> datetime);
   * a bare builtin (`zip(...)`): `builtins`; a bare name defined elsewhere (`Counter(...)`,
     `itemgetter(...)`, imports omitted as snippets do): any stdlib module or a module the
     snippet refers to.

So `pandas.DataFrame.duplicated` is a hit for `df.duplicated()`, while `re.split` is not one
for `s.split(',')` (the snippet never touches `re`), nor `array.array` for `np.array(x)`.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

BUILTINS = "builtins"
STDLIB = "*stdlib*"  # stands for "any stdlib module" in `NameUse.modules`

#: Conventional import aliases (`import numpy as np`).
MODULE_ALIASES: Mapping[str, str] = {
    "np": "numpy", "pd": "pandas", "plt": "matplotlib", "mpl": "matplotlib", "sns": "seaborn",
    "tf": "tensorflow", "sp": "scipy", "nx": "networkx", "dparser": "dateutil",
    "bs": "bs4", "BeautifulSoup": "bs4", "ET": "xml", "etree": "lxml", "mp": "multiprocessing",
}  # fmt: skip
#: Conventional variable names of library objects (`df = pd.DataFrame(...)`).
VARIABLE_HINTS: Mapping[str, str] = {
    "df": "pandas", "df1": "pandas", "df2": "pandas", "dataframe": "pandas",
    "series": "pandas", "soup": "bs4", "driver": "selenium", "browser": "selenium",
    "cursor": "sqlite3", "conn": "sqlite3", "session": "requests", "response": "requests",
    "ax": "matplotlib", "fig": "matplotlib", "img": "PIL", "im": "PIL", "image": "PIL",
}  # fmt: skip
#: Module names that snippets also use as variable names: treated as values too.
_AMBIGUOUS = frozenset({"string", "array", "copy", "types", "code", "select", "token", "test"})
_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
#: Output only, never what a question asks about.
_IGNORED = frozenset({"print"})
_STDLIB_MODULES = frozenset(sys.stdlib_module_names)
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@dataclass(frozen=True)
class NameUse:
    """One name a snippet uses and the top-level modules it may come from."""

    name: str
    modules: frozenset[str]  # may hold `STDLIB`
    attribute: bool = False  # used as `x.name`, not as a bare name

    def allows(self, qualified_name: str, stdlib: bool) -> bool:
        top = qualified_name.partition(".")[0]
        if top == BUILTINS and self.attribute and qualified_name.count(".") < 2:
            return False  # `x.all()` is a method, never the builtin function `all`
        return top in self.modules or (stdlib and STDLIB in self.modules)


def _root(node: ast.expr) -> ast.expr:
    """The expression an attribute chain starts from (`df['a'].str` -> `df`)."""
    while True:
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return node


_LAZY_CALLS = frozenset({"map", "filter", "zip", "range", "reversed"})
_VIEWS = frozenset({"items", "keys", "values"})


def _is_2to3_list(node: ast.Call) -> bool:
    """`list(map(...))`, `list(d.items())`: the wrapper 2to3 added to CoNaLa's Python 2
    snippets; the question is about what it wraps, not about `list`."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "list" and len(node.args) == 1):
        return False
    inner = node.args[0]
    if not isinstance(inner, ast.Call):
        return False
    func = inner.func
    return (isinstance(func, ast.Name) and func.id in _LAZY_CALLS) or (
        isinstance(func, ast.Attribute) and func.attr in _VIEWS
    )


def _hint(name: str) -> str | None:
    """The module a variable's name implies (`df` -> pandas, `my_datetime` -> datetime)."""
    if name in VARIABLE_HINTS:
        return VARIABLE_HINTS[name]
    piece: str
    for piece in _PIECES.findall(name):
        low = piece.lower()
        if low in VARIABLE_HINTS:
            return str(VARIABLE_HINTS[low])
        if len(low) > 3 and low in _STDLIB_MODULES and low not in _AMBIGUOUS:
            return low
    return None


class _Collector(ast.NodeVisitor):
    def __init__(self, known_modules: frozenset[str]) -> None:
        self.known = known_modules
        self.imported: dict[str, str] = {}  # local name -> top-level module
        self.assigned: set[str] = set()
        self.uses: list[tuple[str, str, str | None]] = []  # (name, how, module or receiver)
        self.modules: set[str] = set()

    # -- what the snippet defines
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            self.imported[alias.asname or top] = top
            self.modules.add(top)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        top = (node.module or "").split(".")[0]
        if top:
            self.modules.add(top)
        for alias in node.names:
            if alias.name != "*" and top:
                self.imported[alias.asname or alias.name] = top

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.assigned.add(node.id)
        elif node.id in _BUILTIN_NAMES and node.id not in _IGNORED:
            self.uses.append((node.id, "bare", None))

    def visit_arg(self, node: ast.arg) -> None:
        self.assigned.add(node.arg)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.assigned.add(node.name)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.assigned.add(node.name)
        self.generic_visit(node)

    # -- what it uses
    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id not in _BUILTIN_NAMES:
            self.uses.append((node.func.id, "bare", None))
        if _is_2to3_list(node):
            self.generic_visit(ast.Tuple(elts=node.args, ctx=ast.Load()))
            return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = _root(node.value)
        receiver = root.id if isinstance(root, ast.Name) else None
        self.uses.append((node.attr, "attr", receiver))
        self.generic_visit(node)

    # -- resolution, once the whole snippet is read
    def module_of(self, name: str) -> str | None:
        if name in self.imported:
            return self.imported[name]
        if name in self.assigned:
            return None
        if name in MODULE_ALIASES:
            return MODULE_ALIASES[name]
        return name if name in self.known or name in _STDLIB_MODULES else None

    def resolve(self) -> list[NameUse]:
        for name in self.imported.values():
            self.modules.add(name)
        receivers = {r for _, how, r in self.uses if how == "attr" and r}
        for word in receivers:
            found = self.module_of(word) or (None if word in self.imported else _hint(word))
            if found:
                self.modules.add(found)
        out: list[NameUse] = []
        for name, how, receiver in self.uses:
            if how == "bare":
                if name in self.assigned and name not in self.imported:
                    continue
                if name in self.imported:
                    modules = {self.imported[name]}
                elif name in _BUILTIN_NAMES:
                    modules = {BUILTINS}
                else:
                    modules = {STDLIB, *self.modules}
            else:
                module = self.module_of(receiver) if receiver else None
                if module and (receiver not in _AMBIGUOUS or receiver in self.imported):
                    modules = {module}
                else:
                    modules = {BUILTINS, *self.modules}
                    hint = _hint(receiver) if receiver else None
                    if hint:
                        modules.add(hint)
            out.append(NameUse(name, frozenset(modules), how == "attr"))
        return out


_WORD = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_CHAIN = re.compile(r"(?<![\w.])([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)")
_ANY_ATTR = re.compile(r"\.([A-Za-z_]\w*)")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")


def _regex_uses(snippet: str, known_modules: frozenset[str]) -> list[NameUse]:
    """Fallback for snippets `ast` cannot parse (Python 2 `print x`, pasted output)."""

    def module_of(word: str) -> str | None:
        if word in MODULE_ALIASES:
            return MODULE_ALIASES[word]
        if word in _AMBIGUOUS:
            return None
        return word if word in known_modules or word in _STDLIB_MODULES else None

    snippet = re.sub(r"#[^\n]*", "", snippet)  # comments are prose
    modules = {m for w in _WORD.findall(snippet) if (m := module_of(w) or _hint(w))}
    unknown = frozenset({BUILTINS, *modules})
    uses: list[NameUse] = []
    on_module: set[int] = set()  # offsets of attributes of a module (`np.where`)
    for match in _CHAIN.finditer(snippet):
        module = module_of(match.group(1))
        if module is None:
            continue
        for attr in _ANY_ATTR.finditer(match.group(2)):
            on_module.add(match.start(2) + attr.start())
            uses.append(NameUse(attr.group(1), frozenset({module}), attribute=True))
    for attr in _ANY_ATTR.finditer(snippet):
        if attr.start() not in on_module:
            uses.append(NameUse(attr.group(1), unknown, attribute=True))
    for called in _CALL.findall(snippet):
        if called in _IGNORED or module_of(called):
            continue
        bare = {BUILTINS} if called in _BUILTIN_NAMES else {STDLIB, *modules}
        uses.append(NameUse(called, frozenset(bare)))
    return uses


def snippet_uses(snippet: str, known_modules: Iterable[str] = ()) -> list[NameUse]:
    """The names `snippet` uses, each with the modules it may come from (deduplicated)."""
    known = frozenset(known_modules)
    try:
        tree = ast.parse(snippet)
    except (SyntaxError, ValueError):
        found = _regex_uses(snippet, known)
    else:
        collector = _Collector(known)
        collector.visit(tree)
        found = collector.resolve()
    return merge_uses(found)


def merge_uses(uses: Iterable[NameUse]) -> list[NameUse]:
    """One use per (name, bare or attribute), with the union of their modules."""
    merged: dict[tuple[str, bool], set[str]] = {}
    for use in uses:
        merged.setdefault((use.name, use.attribute), set()).update(use.modules)
    return [NameUse(name, frozenset(mods), attr) for (name, attr), mods in merged.items()]


def is_hit(uses: Iterable[NameUse], qualified_name: str, stdlib: bool) -> bool:
    """Whether the entry `qualified_name` (a function, method, class or property; `stdlib`:
    it belongs to the standard library) documents one of `uses`."""
    leaf = qualified_name.rpartition(".")[2]
    return any(u.name == leaf and u.allows(qualified_name, stdlib) for u in uses)
