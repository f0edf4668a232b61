"""No import circle among `codeweaver` modules, counting imports inside functions and
under `TYPE_CHECKING` too: a circle there is still two modules that need each other."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest


def build(package: str) -> grimp.ImportGraph:
    return grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every group of two or more modules that reach one another by imports (Tarjan's
    strongly connected components, iterative: a deep chain must not hit the recursion
    limit), each sorted, the groups in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def imports(module: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)

    for root in sorted(graph.modules):
        if root in index:
            continue
        visit(root)
        work = [(root, imports(root))]
        while work:
            module, children = work[-1]
            for child in children:
                if child not in index:
                    visit(child)
                    work.append((child, imports(child)))
                    break
                if child in on_stack:
                    low[module] = min(low[module], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    group: list[str] = []
                    while not group or group[-1] != module:
                        group.append(stack.pop())
                        on_stack.discard(group[-1])
                    if len(group) > 1:
                        found.append(sorted(group))
    return sorted(found)


def described(graph: grimp.ImportGraph, group: list[str]) -> str:
    """A circle's imports, each with its line: where to cut it."""
    lines = []
    for importer in group:
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported in group:
                details = graph.get_import_details(importer=importer, imported=imported)
                where = ", ".join(str(d["line_number"]) for d in details)
                lines.append(f"  {importer} -> {imported} (line {where})")
    return "\n".join(lines)


def test_no_module_of_the_package_imports_itself_in_a_circle() -> None:
    graph = build("codeweaver")
    found = circles(graph)
    report = "\n".join(described(graph, group) for group in found)
    assert not found, f"import circles in codeweaver:\n{report}"


def test_a_circle_through_a_function_and_a_type_checking_import_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "circle_sample"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f() -> None:\n    from circle_sample import b\n")
    (package / "b.py").write_text(
        textwrap.dedent("""\
            from typing import TYPE_CHECKING

            import circle_sample.c

            if TYPE_CHECKING:
                from circle_sample import a
            """)
    )
    (package / "c.py").write_text("")  # imported, in no circle
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = build("circle_sample")
    assert circles(graph) == [["circle_sample.a", "circle_sample.b"]]
    assert "circle_sample.a -> circle_sample.b (line 2)" in described(graph, circles(graph)[0])


def test_a_longer_circle_is_one_group_and_a_chain_is_none() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")]:
        graph.add_import(importer=importer, imported=imported)
    graph.add_import(importer="p.e", imported="p.d")
    assert circles(graph) == [["p.a", "p.b", "p.c"]]
