"""What griffe's objects tell of themselves: targets, overloads, keywords, dynamic members."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_DYNAMIC_CLASS_DECORATORS = re.compile(r"dataclass|attr\.|attrs|define|frozen|total_ordering")


def module_overloads(obj: Any) -> dict[str, Any]:
    """Stub functions defined only by `@overload`s live apart from the members."""
    overloads = getattr(obj, "overloads", None)
    return dict(overloads) if overloads else {}


def parameters(signatures: Sequence[Any]) -> frozenset[str] | None:
    """The keyword names any of `signatures` takes (None: one takes `**kwargs`)."""
    names: set[str] = set()
    for signature in signatures:
        for parameter in signature.parameters:
            kind = str(parameter.kind.value)
            if kind == "variadic keyword":
                return None
            if kind in ("positional or keyword", "keyword-only"):
                names.add(parameter.name)
    return frozenset(names)


def final_target(obj: Any) -> Any | None:
    """An alias's final target (None when it cannot be resolved)."""
    if obj is None:
        return None
    if getattr(obj, "is_alias", False):
        try:
            return obj.final_target
        except Exception:
            return None
    return obj


def module_is_dynamic(module: Any) -> bool:
    """A module whose attributes cannot all be read: a `__getattr__` (unless its stub, the
    contract, has none), or a wildcard import griffe could not expand."""
    filepath = Path(str(module.filepath)) if module.filepath else None
    if filepath is None:
        return True
    stub = filepath.with_suffix(".pyi")
    if stub.is_file():
        text = stub.read_text(encoding="utf-8", errors="replace")
        return re.search(r"^def __getattr__|^from \S+ import \*", text, re.MULTILINE) is not None
    if "__getattr__" in module.members:
        return True
    try:
        text = filepath.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    if "globals()[" in text or "setattr(sys.modules" in text:
        return True
    # griffe expands wildcard imports from its own package; one from elsewhere (a C
    # module, another package) may bring names it never read.
    top = str(module.path).partition(".")[0]
    # Indentation within the line: `^\s*` would rescan a run of blank lines from each.
    for source in re.findall(r"^[^\S\n]*from\s+(\S+)\s+import\s+\*", text, re.MULTILINE):
        if not source.startswith(".") and source.partition(".")[0] != top:
            return True
    return False


def class_is_dynamic(cls: Any) -> bool:
    """A class that gains members at run time: a metaclass (but `ABCMeta`, which adds
    none a program calls), or a decorator such as `dataclass` (fields are kept, but the
    generated methods are not read)."""
    for decorator in getattr(cls, "decorators", None) or ():
        if _DYNAMIC_CLASS_DECORATORS.search(str(decorator.value)):
            return True
    keywords = getattr(cls, "keywords", None) or {}
    metaclass = keywords.get("metaclass")
    return metaclass is not None and str(metaclass).rpartition(".")[2] != "ABCMeta"
