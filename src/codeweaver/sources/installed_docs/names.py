"""Public names: under which name users import each collected definition.

A definition in a private module (`_io`, `_collections_abc`, `_pytest.x`) or in a package's
submodule is published under the name users import it by, following `from X import name` /
`from X import *` statements of public modules (and, for C base classes,
`class TextIOBase(_io._TextIOBase)`). A class's member is also published under each class
of the same distribution that inherits it without defining it (`heirs_of`): users call
`pandas.core.generic.NDFrame.to_csv` as `DataFrame.to_csv`, and `argparse`'s private
`_ActionsContainer.add_argument` as `ArgumentParser.add_argument`. The shortest public name
wins; the others become aliases. Definitions with no public name, no docstring, or a
private (`_name`) name are left out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from codeweaver.sources.installed_docs.made_docs import MadeDocs
from codeweaver.sources.installed_docs.model import DocEntry

#: Modules whose contents are documented under another name.
MODULE_ALIASES = {"posixpath": "os.path"}
#: C modules re-exported wholesale by a differently named module.
_C_FACES = {"posix": "os", "nt": "os"}


@dataclass
class Definition:
    """One documented definition as found in its (possibly private) module."""

    module: str
    qualname: str  # "" for the module docstring itself
    kind: str
    signature: str
    doc: str
    path: str


@dataclass
class Group:
    """Definitions and re-export edges of one distribution (or of the stdlib)."""

    c_modules: frozenset[str] = frozenset()
    defs: list[Definition] = field(default_factory=list)
    named: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    star: dict[str, list[str]] = field(default_factory=dict)
    made: MadeDocs = field(default_factory=MadeDocs)  # docstrings written at import time
    classes: set[tuple[str, str]] = field(default_factory=set)  # (module, top-level class)
    #: (module, class) -> where a base of it is named from (`class DataFrame(NDFrame)`).
    bases: list[tuple[tuple[str, str], tuple[str, str]]] = field(default_factory=list)

    def add_edge(self, src: str, name: str, dst: str, dst_name: str) -> None:
        """`dst` re-exports `src.name` as `dst_name` (`*` for a star import).

        Only re-exports that publish an implementation are followed: from a submodule into
        its package (`requests` <- `requests.api`) or into a sibling `api` module
        (`pandas.core.api` <- `pandas.core.frame`), from a private module of the same family
        (`io` <- `_io`, `pytest` <- `_pytest.x`, `numpy` <- `numpy._core.x`), or `os` <-
        `posix`. Ordinary imports (`from itertools import *` in some module) are not aliases.
        `dst` may be private: chains (`numpy._core.fromnumeric` -> `numpy._core` -> `numpy`)
        are followed.
        """
        if src == "builtins" or (dst_name != "*" and dst_name.startswith("_")):
            return
        if not (
            src.startswith(dst + ".")
            or _api_facade(src, dst)
            or ((not is_public(src) or src in self.c_modules) and _same_family(src, dst))
            or _C_FACES.get(src) == dst
        ):
            return
        if name == "*":
            self.star.setdefault(src, []).append(dst)
        else:
            self.named.setdefault((src, name), []).append((dst, dst_name))


def _api_facade(src: str, dst: str) -> bool:
    """`pandas.core.api` gathers `pandas.core.frame.DataFrame` for `pandas` to re-export: an
    `api` module publishes what its sibling modules implement."""
    parent, _, leaf = dst.rpartition(".")
    return leaf == "api" and bool(parent) and src.startswith(parent + ".")


def _same_family(src: str, dst: str) -> bool:
    """`_io`/`io`, `_pytest.python`/`pytest`, `_collections_abc`/`collections.abc`..."""
    a, b = src.split(".")[0].strip("_"), dst.split(".")[0].strip("_")
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def is_public(module: str) -> bool:
    return bool(module) and not any(part.startswith("_") for part in module.split("."))


Heirs = dict[tuple[str, str], list[tuple[str, str]]]


def heirs_of(group: Group) -> Heirs:
    """(module, class) -> the classes of the group that name it as a base, wherever they
    import it from (`from pandas.core.generic import NDFrame`)."""
    out: Heirs = {}
    for child, named in group.bases:
        where: tuple[str, str] | None = named
        for _ in range(8):  # follow `from x import name` to where the class is defined
            if where is None or where in group.classes:
                break
            where = group.made.imported.get(where)
        if where is not None and where in group.classes and where != child:
            out.setdefault(where, []).append(child)
    return out


def _inheriting(
    heirs: Heirs, members: set[tuple[str, str]], owner: tuple[str, str], member: str
) -> list[tuple[str, str]]:
    """The subclasses (and theirs) that inherit `member` of `owner`, not defining it."""
    found: list[tuple[str, str]] = []
    queue = deque(heirs.get(owner, ()))
    while queue and len(found) < 32:
        child = queue.popleft()
        if child in found or (child[0], f"{child[1]}.{member}") in members:
            continue  # an override is its own page, and what inherits from it
        found.append(child)
        queue.extend(heirs.get(child, ()))
    return found


def _public_names(
    group: Group,
    definition: Definition,
    heirs: Heirs | None = None,
    members: set[tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """(module, full name) pairs under which `definition` is public, best first. A member
    of a class is also public under each subclass that inherits it (`heirs`): users call
    `pandas.core.generic.NDFrame.to_csv` as `DataFrame.to_csv`."""
    if not definition.qualname:
        return [(definition.module, definition.module)] if is_public(definition.module) else []
    top, _, rest = definition.qualname.partition(".")
    suffix = f".{rest}" if rest else ""
    found: list[tuple[str, str]] = []
    starts = [(definition.module, top)]
    if rest and heirs:
        starts += _inheriting(heirs, members or set(), starts[0], rest)
    seen = set(starts)
    # Breadth first: the nearest re-exports (`numpy._core` -> `numpy`) are reached before
    # the cap, however many modules import a popular name (`ndarray`) for their own use.
    stack = deque(starts)
    while stack:
        module, name = stack.popleft()
        if is_public(module) and module not in MODULE_ALIASES and not name.startswith("_"):
            found.append((module, f"{module}.{name}{suffix}"))
        targets = list(group.named.get((module, name), []))
        if not name.startswith("_"):
            targets += [(dst, name) for dst in group.star.get(module, [])]
        for target in targets:
            if target not in seen and len(seen) < 64 + len(starts):
                seen.add(target)
                stack.append(target)
    return sorted(set(found), key=lambda item: (item[1].count("."), len(item[1]), item[1]))


def finalise(group: Group, package: str, display: str, version: str, home: str) -> list[DocEntry]:
    """Entries of the definitions that have a public name (the best one; others are aliases).

    Definitions that end up under the same name are merged: the longer docstring wins.
    """
    best: dict[str, DocEntry] = {}
    heirs = heirs_of(group)
    members = {(d.module, d.qualname) for d in group.defs}
    for definition in group.defs:
        names = _public_names(group, definition, heirs, members)
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
