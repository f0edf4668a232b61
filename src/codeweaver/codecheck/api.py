"""The installed APIs of one Python environment, read statically: its packages and
standard library with griffe (sources, with their `.pyi` stubs merged), the standard
library's built-in and C modules from typeshed's stubs. Nothing is imported or run.

Every answer here is precision first: `member` says `MISSING` only when the owner is fully
known (a module or class whose every member griffe could read, nothing dynamic about it);
anything it cannot be sure of is `UNKNOWN`, which the check never reports.
"""

from __future__ import annotations

import enum
import logging
import re
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from codeweaver.codecheck.classes import Lineages
from codeweaver.codecheck.griffe_objects import (
    class_is_dynamic,
    final_target,
    module_is_dynamic,
    module_overloads,
    parameters,
)

logger = logging.getLogger(__name__)


class Verdict(enum.Enum):
    FOUND = "found"
    MISSING = "missing"
    UNKNOWN = "unknown"


# Classes whose `__getattr__` returns data, never a callable (pandas: a column by name), so
# a call of a name they lack still fails: calls are checked on them, attributes are not.
DATA_GETATTR = frozenset({"pandas.core.generic.NDFrame"})
# Decorators that keep a function's parameters (the others may change them).
KEEPS_SIGNATURE = re.compile(
    r"^(?:staticmethod|classmethod|property|abstractmethod|abc\.abstractmethod|overload|"
    r"typing\.overload|final|typing\.final|override|doc|Appender|Substitution|set_module|"
    r"deprecate\w*|\w*deprecated\w*|array_function_dispatch|cache_readonly|functools\.wraps)"
)


def typeshed_stdlib() -> Path | None:
    """typeshed's standard-library stubs, as shipped inside `typeshed_client`."""
    try:
        import typeshed_client
    except ImportError:
        return None
    folder = Path(typeshed_client.__file__).parent / "typeshed"
    return folder if (folder / "builtins.pyi").is_file() else None


class ApiIndex:
    """Lazily loaded packages of one environment (`search_paths`: its site-packages and
    standard library), thread-safe; a package that cannot be read is unknown."""

    def __init__(
        self,
        search_paths: Sequence[Path],
        *,
        python_version: str = "",
        stubs: Path | None = None,
    ) -> None:
        import griffe

        # griffe logs what it cannot resolve in the stubs it reads (typeshed's
        # `typing_extensions`): the check's own business, not the user's.
        logging.getLogger("griffe").setLevel(logging.CRITICAL)
        self.search_paths = [Path(p) for p in search_paths]
        self.python_version = python_version
        self._stubs = stubs if stubs is not None else typeshed_stdlib()
        self._loader = griffe.GriffeLoader(
            search_paths=[str(p) for p in self.search_paths], allow_inspection=False
        )
        self._loader.finder = _finder_without_tests(self.search_paths)
        self._lock = threading.Lock()
        self._modules: dict[str, Any] = {}
        self._lineages = Lineages(self.get)
        self._versions: dict[str, str] | None = None

    # ---------------------------------------------------------------- loading

    def module(self, top: str) -> Any | None:
        """The top-level module `top`, loaded once (None when it cannot be read)."""
        with self._lock:
            if top in self._modules:
                return self._modules[top]
            found = self._load(top)
            self._modules[top] = found
            return found

    def _load(self, top: str) -> Any | None:
        import griffe

        try:
            module = self._loader.load(top)
            self._loader.resolve_aliases(implicit=False, external=None)
            return module
        except ModuleNotFoundError:
            pass
        except Exception as exc:  # griffe could not read it: unknown, never a finding
            logger.info("codecheck: cannot read %s: %s", top, exc)
            return None
        stub = self._stub_path(top)
        if stub is None:
            return None
        try:
            module = griffe.visit(
                top, filepath=stub, code=stub.read_text(encoding="utf-8"),
                modules_collection=self._loader.modules_collection,
            )  # fmt: skip
            self._loader.modules_collection.set_member(top, module)
            return module
        except Exception as exc:
            logger.info("codecheck: cannot read the stub of %s: %s", top, exc)
            return None

    def _stub_path(self, top: str) -> Path | None:
        if self._stubs is None:
            return None
        for candidate in (self._stubs / f"{top}.pyi", self._stubs / top / "__init__.pyi"):
            if candidate.is_file():
                return candidate
        return None

    # ---------------------------------------------------------------- lookups

    def get(self, path: str) -> Any | None:
        """The object at dotted `path` (aliases followed), or None when unknown."""
        top, *rest = path.split(".")
        obj = self.module(top)
        for name in rest:
            if obj is None:
                return None
            if self.member(obj, name, call=False) is not Verdict.FOUND:
                return None
            obj = final_target(self._child(obj, name))
        return obj

    def lineage(self, cls: Any) -> list[Any | None]:
        """`cls` and its bases (None: a base that cannot be resolved); see `classes`."""
        return self._lineages.of(cls)

    def _child(self, obj: Any, name: str) -> Any | None:
        owners = [c for c in self.lineage(obj) if c is not None] if obj.is_class else [obj]
        for owner in owners:
            if name in owner.members:
                return owner.members[name]
            found = module_overloads(owner).get(name)
            if found:
                return found[0]
        return None

    def member_names(self, path: str) -> list[str]:
        """The public names of the module or class at `path` (sorted; [] when unknown)."""
        obj = self.get(path)
        try:
            if obj is None or not (obj.is_module or obj.is_class):
                return []
            owners = [c for c in self.lineage(obj) if c is not None] if obj.is_class else [obj]
            names = {
                name for owner in owners for name in (*owner.members, *module_overloads(owner))
            }
        except Exception:
            return []
        return sorted(name for name in names if not name.startswith("_"))

    def is_class(self, path: str) -> bool:
        obj = self.get(path)
        return obj is not None and bool(obj.is_class)

    def member(self, obj: Any, name: str, *, call: bool) -> Verdict:
        """Whether `obj` has `name`; `call`: the code calls it (a data `__getattr__`
        cannot answer a call)."""
        obj = final_target(obj)
        if obj is None:
            return Verdict.UNKNOWN
        try:
            if obj.is_module:
                return self._module_member(obj, name)
            if obj.is_class:
                return self._class_member(obj, name, call=call)
            if obj.is_function:
                return self._function_member(obj, name)
        except Exception as exc:  # an alias or base griffe cannot resolve
            logger.debug("codecheck: %s.%s: %s", getattr(obj, "path", "?"), name, exc)
        return Verdict.UNKNOWN

    def _module_member(self, module: Any, name: str) -> Verdict:
        if name in module.members or module_overloads(module).get(name):
            return Verdict.FOUND
        if not module_is_dynamic(module):
            return Verdict.MISSING
        # A standard-library module filled from C (`os`: `from posix import *`): typeshed's
        # stub lists what it has.
        stub = self._stub_module(str(module.path))
        if stub is None or module_is_dynamic(stub):
            return Verdict.UNKNOWN
        found = name in stub.members or module_overloads(stub).get(name)
        return Verdict.FOUND if found else Verdict.MISSING

    def _stub_module(self, dotted: str) -> Any | None:
        """typeshed's stub of the standard-library module `dotted`, read once."""
        import griffe

        key = f"stub:{dotted}"
        with self._lock:
            if key in self._modules:
                return self._modules[key]
        found = None
        if self._stubs is not None:
            base = self._stubs.joinpath(*dotted.split("."))
            for path in (base.with_suffix(".pyi"), base / "__init__.pyi"):
                if path.is_file():
                    try:
                        found = griffe.visit(
                            dotted, filepath=path, code=path.read_text(encoding="utf-8")
                        )
                    except Exception as exc:
                        logger.info("codecheck: cannot read the stub of %s: %s", dotted, exc)
                    break
        with self._lock:
            self._modules[key] = found
        return found

    def _class_member(self, cls: Any, name: str, *, call: bool) -> Verdict:
        lineage = self.lineage(cls)
        known = [c for c in lineage if c is not None]
        if any(name in c.members or module_overloads(c).get(name) for c in known):
            return Verdict.FOUND
        if len(known) < len(lineage):
            return Verdict.UNKNOWN  # a base the index cannot read may have it
        for base in known:
            if class_is_dynamic(base):
                return Verdict.UNKNOWN
            getattr_ = "__getattr__" in base.members or "__getattribute__" in base.members
            if getattr_ and not (call and base.path in DATA_GETATTR):
                return Verdict.UNKNOWN
        return Verdict.MISSING

    def _function_member(self, function: Any, name: str) -> Verdict:
        # A plain function has no attributes of its own (`functools.lru_cache.cache_clear`);
        # a decorated one may be any object, and a stub's function may stand for one.
        if getattr(function, "decorators", None) or str(function.filepath).endswith(".pyi"):
            return Verdict.UNKNOWN
        return Verdict.MISSING

    def keywords(self, obj: Any) -> frozenset[str] | None:
        """The keyword names a call of `obj` accepts, or None when it takes any (or that
        cannot be known: decorated, `**kwargs`, a class with a metaclass or a dataclass)."""
        obj = final_target(obj)
        if obj is None:
            return None
        try:
            if obj.is_class:
                return self._constructor_keywords(obj)
            if not obj.is_function:
                return None
            for decorator in getattr(obj, "decorators", None) or ():
                if not KEEPS_SIGNATURE.match(str(decorator.value)):
                    return None
            return parameters([obj, *(module_overloads(obj.parent).get(obj.name) or ())])
        except Exception as exc:
            logger.debug("codecheck: keywords of %s: %s", getattr(obj, "path", "?"), exc)
            return None

    def _constructor_keywords(self, cls: Any) -> frozenset[str] | None:
        """What `cls(...)` accepts: its `__init__`'s and `__new__`'s keywords (those
        `object` defines take none)."""
        lineage = self.lineage(cls)
        if class_is_dynamic(cls) or None in lineage:
            return None
        names: set[str] = set()
        for special in ("__init__", "__new__"):
            for owner in lineage:
                if owner is None or str(owner.path) == "builtins.object":
                    break
                overloads = module_overloads(owner).get(special)
                method = final_target(owner.members.get(special))
                if not overloads and method is None:
                    continue
                accepted = parameters([*(overloads or ()), *([method] if method else [])])
                if accepted is None:
                    return None
                names |= accepted
                break
        return frozenset(names)

    # ---------------------------------------------------------------- versions

    def version_of(self, path: str) -> str:
        """ "pandas 2.2.3", or "Python 3.11" for the standard library ("" if unknown)."""
        top = path.partition(".")[0]
        versions = self._distribution_versions()
        if top in versions:
            return f"{top} {versions[top]}"
        if self.module(top) is not None and self.python_version:
            return f"Python {self.python_version}"
        return ""

    def _distribution_versions(self) -> dict[str, str]:
        if self._versions is None:
            found: dict[str, str] = {}
            paths = [str(p) for p in self.search_paths]
            for dist in metadata.distributions(path=paths):
                name = dist.metadata["Name"] or ""
                tops = (dist.read_text("top_level.txt") or "").split() or [name]
                for top in tops:
                    found.setdefault(top.replace("-", "_"), dist.version)
            self._versions = found
        return self._versions


# A package's test suites are no API: pandas ships 1,112 test modules of its 1,411, NumPy
# 246 of 485, and reading them was most of the first check's time.
TEST_PACKAGES = frozenset({"tests", "test", "conftest"})


def _finder_without_tests(search_paths: Sequence[Path]) -> Any:
    """griffe's module finder, skipping the submodules of test packages."""
    import griffe

    class Finder(griffe.ModuleFinder):
        def submodules(self, module: Any) -> list[Any]:
            return [
                (parts, path)
                for parts, path in super().submodules(module)
                if not TEST_PACKAGES.intersection(parts)
            ]

    return Finder(search_paths)
