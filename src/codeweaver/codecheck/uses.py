"""Which APIs a Python code block uses: attribute chains on imported names, calls and their
keyword arguments, read with `ast` (never run).

Names are followed through imports and aliases (`import pandas as pd`), simple assignments
(`df = pd.DataFrame(...)` makes `df` an instance of `pd.DataFrame`; `f = pd.read_csv`
makes `f` that function), what a call returns when its annotation names one class
(`df = pd.read_csv(...)`; `returns`) and the builtins. Anything else (a parameter, a loop
variable, a name assigned twice in different ways) is unknown, and its attributes are
never reported: the check only judges what it can follow.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from dataclasses import dataclass, field

BUILTINS = frozenset(dir(builtins))
SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Literals make instances of builtin types (`{}.has_key`, `"a b".split(maxsplits=1)`).
LITERALS: dict[type[ast.expr], str] = {
    ast.Dict: "builtins.dict", ast.DictComp: "builtins.dict", ast.List: "builtins.list",
    ast.ListComp: "builtins.list", ast.Set: "builtins.set", ast.SetComp: "builtins.set",
    ast.JoinedStr: "builtins.str",
}  # fmt: skip


# What a call of the API at a path returns (a class path), given the call and the class it
# is called on; None when unknown.
Returns = Callable[[str, ast.Call, str | None], str | None]


@dataclass(frozen=True)
class Ref:
    """A name bound to an API: `path` itself (a module, class or function), or an instance
    of the class `path` when `instance`."""

    path: str
    instance: bool = False


@dataclass(frozen=True)
class Use:
    """`owner.name` as the code uses it (`name` empty: `owner` itself is called)."""

    owner: Ref
    name: str
    line: int
    call: bool = False
    keywords: tuple[str, ...] = ()

    @property
    def dotted(self) -> str:
        """The API as documented: `pandas.DataFrame.append`, `sorted` (builtins bare)."""
        path = f"{self.owner.path}.{self.name}" if self.name else self.owner.path
        return path.removeprefix("builtins.")


@dataclass
class _Scope:
    names: dict[str, Ref | None] = field(default_factory=dict)  # None: bound, unknown


class UseCollector(ast.NodeVisitor):
    """Collects `Use`s in source order; see the module docstring for what it follows."""

    def __init__(self, is_class: Callable[[str], bool], returns: Returns | None = None) -> None:
        self.is_class = is_class
        self.returns = returns
        self.uses: list[Use] = []
        self.scopes: list[_Scope] = [_Scope()]
        self._assigned: set[str] = set()

    # ---------------------------------------------------------------- names

    def lookup(self, name: str) -> Ref | None:
        for scope in reversed(self.scopes):
            if name in scope.names:
                return scope.names[name]
        if name in BUILTINS and name not in self._assigned:
            return Ref(f"builtins.{name}")
        return None

    def bind(self, name: str, ref: Ref | None) -> None:
        self.scopes[-1].names[name] = ref

    def bind_target(self, target: ast.expr, ref: Ref | None) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, ref)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.bind_target(
                    element.value if isinstance(element, ast.Starred) else element, None
                )

    # ---------------------------------------------------------------- statements

    def visit_Module(self, node: ast.Module) -> None:
        self._assigned = {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {
            n.name for n in ast.walk(node)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }  # fmt: skip
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.bind(alias.asname, Ref(alias.name))
            else:
                top = alias.name.partition(".")[0]
                self.bind(top, Ref(top))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            for alias in node.names:  # the user's own modules: unknown
                self.bind(alias.asname or alias.name, None)
            return
        for alias in node.names:
            if alias.name != "*":
                self.uses.append(Use(Ref(node.module), alias.name, node.lineno))
                self.bind(alias.asname or alias.name, Ref(f"{node.module}.{alias.name}"))

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.expr(node.value)
        for target in node.targets:
            self.target(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        value = self.expr(node.value) if node.value is not None else None
        self.target(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.expr(node.value)
        self.target(node.target, None)

    def target(self, target: ast.expr, value: Ref | None) -> None:
        if isinstance(target, ast.Name | ast.Tuple | ast.List):
            self.bind_target(target, value)
        else:  # `obj.attr = …`, `obj[k] = …`: reads obj
            self.expr(target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.expr(node.iter)
        self.bind_target(node.target, None)
        for statement in (*node.body, *node.orelse):
            self.visit(statement)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.expr(item.context_expr)
            if item.optional_vars is not None:
                self.bind_target(item.optional_vars, None)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.expr(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.expr(default)
        self.bind(node.name, None)
        scope = _Scope()
        arguments = node.args
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            scope.names[arg.arg] = None
        for variadic in (arguments.vararg, arguments.kwarg):
            if variadic is not None:
                scope.names[variadic.arg] = None
        self.scopes.append(scope)
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expression in (*node.bases, *node.decorator_list):
            self.expr(expression)
        self.bind(node.name, None)
        self.scopes.append(_Scope())
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.expr(node.type)
        if node.name:
            self.bind(node.name, None)
        for statement in node.body:
            self.visit(statement)

    def visit_Expr(self, node: ast.Expr) -> None:
        self.expr(node.value)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.ExceptHandler | ast.match_case):
                self.visit(child)
            elif isinstance(child, ast.expr):
                self.expr(child)

    # ---------------------------------------------------------------- expressions

    def expr(self, node: ast.expr) -> Ref | None:
        """Record the uses in `node`; what it evaluates to, when known."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id) if isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Attribute):
            owner = self.expr(node.value)
            if owner is None:
                return None
            self.uses.append(Use(owner, node.attr, node.lineno))
            return None if owner.instance else Ref(f"{owner.path}.{node.attr}")
        if isinstance(node, ast.Call):
            return self.call(node)
        literal = LITERALS.get(type(node))
        if literal is not None:
            self.generic_expr(node)
            return Ref(literal, instance=True)
        if isinstance(node, ast.Constant) and type(node.value) in (str, bytes):
            return Ref(f"builtins.{type(node.value).__name__}", instance=True)
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value)
            self.bind(node.target.id, value)
            return value
        self.generic_expr(node)
        return None

    def generic_expr(self, node: ast.expr) -> None:
        if isinstance(node, SCOPED):
            self.scoped(node)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)

    def scoped(self, node: ast.expr) -> None:
        """Comprehensions and lambdas bind names of their own: unknown inside."""
        scope = _Scope()
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                scope.names[child.id] = None
            elif isinstance(child, ast.arg):
                scope.names[child.arg] = None
        self.scopes.append(scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, ast.comprehension):
                for part in (child.iter, *child.ifs):
                    self.expr(part)
        self.scopes.pop()

    def call(self, node: ast.Call) -> Ref | None:
        func = node.func
        keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
        spread = any(k.arg is None for k in node.keywords)
        target: Ref | None
        callee, receiver = "", None  # the function called, the class it is called on
        if isinstance(func, ast.Attribute):
            owner = self.expr(func.value)
            target = None
            if owner is not None:
                use = Use(owner, func.attr, func.lineno, True, () if spread else keywords)
                self.uses.append(use)
                target = None if owner.instance else Ref(f"{owner.path}.{func.attr}")
                callee = f"{owner.path}.{func.attr}"
                receiver = owner.path if owner.instance or self.is_class(owner.path) else None
        else:
            target = self.expr(func)
            if target is not None and isinstance(func, ast.Name):
                use = Use(target, "", func.lineno, True, () if spread else keywords)
                self.uses.append(use)
            if target is not None and not target.instance:
                callee = target.path
        for argument in (*node.args, *(k.value for k in node.keywords)):
            self.expr(argument)
        if target is not None and not target.instance and self.is_class(target.path):
            return Ref(target.path, instance=True)
        if callee and self.returns is not None:
            returned = self.returns(callee, node, receiver)
            if returned:
                return Ref(returned, instance=True)
        return None


def collect_uses(
    tree: ast.Module, is_class: Callable[[str], bool], returns: Returns | None = None
) -> list[Use]:
    """The uses of `tree`, in source order. `is_class(path)`: whether calling the API at
    `path` makes an instance of it (so `df = pd.DataFrame()` types `df`); `returns`: what
    a call returns, when known."""
    collector = UseCollector(is_class, returns)
    collector.visit(tree)
    return collector.uses
