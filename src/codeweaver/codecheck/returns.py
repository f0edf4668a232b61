"""What a call returns, from the return annotation the API index reads: `pd.read_csv(...)`
gives a `pandas.DataFrame`, `df.merge(...)` too, `df.groupby(...)` a `DataFrameGroupBy`.

Only one class is ever concluded, never a guess: a union is narrowed only by dropping
`None` (any attribute of `None` is missing too), `Self` is the receiver's class, a generic
(`Match[str]`) is its class. Among `@overload`s the first one the call can match is taken,
as a type checker does: by the number of positional arguments, the keywords given, the
parameters without a default, and `Literal[...]` parameters, which only a constant they
list matches. An argument bound to a parameter typed otherwise, and differently in another
matching overload, leaves the choice open: nothing is concluded (`open(p, 'rb')`, whose
modes are type aliases). `read_csv('a.csv')` is a DataFrame. A call it cannot read
(`*args`, `**kwargs`) concludes nothing.
"""

from __future__ import annotations

import ast
import logging
from typing import Any

from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.griffe_objects import final_target, module_overloads

logger = logging.getLogger(__name__)

_SELF = frozenset({"Self", "typing.Self", "typing_extensions.Self"})
_OPTIONAL = frozenset({"Optional", "typing.Optional"})
_LITERAL = frozenset({"Literal", "typing.Literal", "typing_extensions.Literal"})
_BOUND = frozenset({"positional-only", "positional or keyword"})


def call_returns(api: ApiIndex, path: str, call: ast.Call, receiver: str | None) -> str | None:
    """The class (public path: `pandas.DataFrame`) an instance of which `call` of the API at
    `path` returns; `receiver`: the class it is called on (for `Self`). None if unknown."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    try:
        function = final_target(api.get(path))
        if function is None or not function.is_function:
            return None
        overloads = module_overloads(function.parent).get(function.name) or getattr(
            function, "overloads", None
        )
        method = bool(function.parent is not None and function.parent.is_class)
        chosen = function
        if overloads:
            chosen = _overload(overloads, call, method)
            if chosen is None:
                return None
        found = _class_of(api, chosen.returns, receiver)
    except Exception as exc:  # an annotation griffe cannot resolve: unknown
        logger.debug("codecheck: the return of %s: %s", path, exc)
        return None
    return _public(api, found) if found else None


def _overload(overloads: list[Any], call: ast.Call, method: bool) -> Any | None:
    """The first overload `call` matches, when what tells them apart is known: an argument
    bound to a parameter typed differently in another matching overload must be checked
    against a `Literal` (`open(p, 'rb')`, whose modes are type aliases, concludes nothing)."""
    matching: list[tuple[Any, dict[str, Any]]] = []
    for overload in overloads:
        binding = _binding(overload, call, method)
        if binding is not None:
            matching.append((overload, binding))
    if not matching:
        return None
    chosen, binding = matching[0]
    for name, parameter in binding.items():
        annotations = {str(_param(o, name, method)) for o, _ in matching}
        if len(annotations) > 1 and not _is_literal(parameter.annotation):
            return None
    return chosen


def _param(signature: Any, name: str, method: bool) -> Any:
    for parameter in _parameters(signature, method):
        if parameter.name == name:
            return parameter.annotation
    return None


def _parameters(signature: Any, method: bool) -> list[Any]:
    parameters = list(signature.parameters)
    if method and parameters and "staticmethod" not in _decorators(signature):
        parameters = parameters[1:]  # `self` or `cls`, already bound
    return parameters


def _binding(signature: Any, call: ast.Call, method: bool) -> dict[str, Any] | None:
    """The parameters the call's arguments bind to, by name, when the call fits this
    overload (see the module docstring); None when it does not."""
    parameters = _parameters(signature, method)
    kinds = {p.kind.value for p in parameters}
    positional = [p for p in parameters if p.kind.value in _BOUND]
    if len(call.args) > len(positional) and "variadic positional" not in kinds:
        return None
    binding: dict[str, Any] = {}
    for parameter, value in zip(positional, call.args, strict=False):
        if not _literal_allows(parameter.annotation, value):
            return None
        binding[parameter.name] = parameter
    by_name = {p.name: p for p in parameters if p.kind.value != "positional-only"}
    for keyword in call.keywords:
        name = keyword.arg or ""
        if name in binding or (name not in by_name and "variadic keyword" not in kinds):
            return None
        if name in by_name:
            if not _literal_allows(by_name[name].annotation, keyword.value):
                return None
            binding[name] = by_name[name]
    for parameter in parameters:
        if parameter.kind.value.startswith("variadic"):
            continue
        if parameter.default is None and parameter.name not in binding:
            return None
    return binding


def _decorators(obj: Any) -> set[str]:
    return {str(d.value) for d in getattr(obj, "decorators", None) or ()}


def _is_literal(annotation: Any) -> bool:
    return str(annotation).partition("[")[0] in _LITERAL


def _literal_allows(annotation: Any, value: ast.expr) -> bool:
    """False when `annotation` is `Literal[...]` and `value` is not a constant it lists
    (a variable's value is unknown: it matches no `Literal`)."""
    if not _is_literal(annotation):
        return True
    rest = str(annotation).partition("[")[2]
    if not isinstance(value, ast.Constant) or not rest.endswith("]"):
        return False
    try:
        listed = ast.literal_eval(f"({rest[:-1]},)")
    except (ValueError, SyntaxError):
        return False
    return value.value in listed


def _class_of(api: ApiIndex, annotation: Any, receiver: str | None) -> str | None:
    """The one class `annotation` names (see the module docstring), else None."""
    if annotation is None or isinstance(annotation, str):
        return None
    kind = type(annotation).__name__
    if kind == "ExprBinOp" and str(getattr(annotation, "operator", "")) == "|":
        parts = [p for p in _union(annotation) if str(p) != "None"]
        return _class_of(api, parts[0], receiver) if len(parts) == 1 else None
    if kind == "ExprSubscript":
        left = annotation.left
        name = str(getattr(left, "canonical_path", left))
        if name in _OPTIONAL or str(left) in _OPTIONAL:
            return _class_of(api, annotation.slice, receiver)
        return _class_of(api, left, receiver)
    if kind != "ExprName":
        return None
    if str(annotation) in _SELF or str(annotation.canonical_path) in _SELF:
        return receiver if receiver and api.is_class(receiver) else None
    path = str(annotation.canonical_path)
    if "." not in path:  # `str`, `dict`: a builtin
        path = f"builtins.{path}"
    return path if api.is_class(path) else None


def _union(annotation: Any) -> list[Any]:
    if type(annotation).__name__ == "ExprBinOp" and str(annotation.operator) == "|":
        return [*_union(annotation.left), *_union(annotation.right)]
    return [annotation]


def _public(api: ApiIndex, path: str) -> str:
    """`pandas.DataFrame` for `pandas.core.frame.DataFrame` when the package exports it
    under that name; the path itself otherwise."""
    top, _, rest = path.partition(".")
    leaf = rest.rpartition(".")[2]
    if not leaf:
        return path
    candidate = f"{top}.{leaf}"
    found = final_target(api.get(candidate)) if candidate != path else None
    return candidate if found is not None and str(found.path) == path else path
