"""Which packages of node_modules are read, and which files are not followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeweaver.sources.npm_docs.collect import package_entries
from codeweaver.sources.npm_docs.discover import (
    find_node_modules,
    list_packages,
    read_within,
    search_folders,
)
from codeweaver.sources.npm_docs.model import NpmOptions
from tests.unit.sources.npm_docs.conftest import add_package

DTS = "/** Say hello. */\nexport declare function hello(name: string): string;\n"


def _names(node_modules: Path, options: NpmOptions | None = None) -> list[str]:
    return [p.name for p in list_packages(node_modules, options or NpmOptions())]


def test_scoped_packages_are_read_and_tooling_folders_are_not(project: Path) -> None:
    node_modules = project / "node_modules"
    add_package(node_modules, "@acme/greeter", "2.1.0", {"index.d.ts": DTS}, types="index.d.ts")
    add_package(node_modules, "@types/greeter-cli", "1.0.3", {"index.d.ts": DTS})
    add_package(node_modules, "ghost", "9.9.9", at=".cache/ghost")  # tooling: a dot folder
    add_package(node_modules, "nested", "0.1.0", at="eventemitter3/node_modules/nested")
    (node_modules / "not-a-package").mkdir()  # no package.json
    assert _names(node_modules) == ["@acme/greeter", "@types/greeter-cli", "eventemitter3"]
    scoped = next(p for p in list_packages(node_modules, NpmOptions()) if p.name == "@acme/greeter")
    _, entries = package_entries(scoped, node_modules.resolve(), NpmOptions())
    (api,) = [e for e in entries if e.is_api]
    assert (api.package, api.version, api.name, api.doc) == (
        "@acme/greeter",
        "2.1.0",
        "hello",
        "Say hello.",
    )
    typed = next(
        p for p in list_packages(node_modules, NpmOptions()) if p.name.startswith("@types/")
    )
    _, entries = package_entries(typed, node_modules.resolve(), NpmOptions())
    assert [e.name for e in entries if e.is_api] == ["hello"]  # index.d.ts without `types`


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_links_out_of_node_modules_are_not_followed(project: Path, tmp_path: Path) -> None:
    node_modules = project / "node_modules"
    outside = add_package(tmp_path / "elsewhere", "linked", "1.0.0", {"index.d.ts": DTS})
    (node_modules / "linked").symlink_to(outside, target_is_directory=True)  # a workspace link
    secret = tmp_path / "secret.d.ts"
    secret.write_text("/** Private. */\nexport declare function leak(): void;\n", encoding="utf-8")
    sneaky = add_package(node_modules, "sneaky", "1.0.0")
    (sneaky / "index.d.ts").symlink_to(secret)
    # A pnpm-style link inside node_modules is read.
    store = add_package(node_modules, "inner", "1.0.0", {"index.d.ts": DTS},
                        at=".pnpm/inner@1.0.0/node_modules/inner")  # fmt: skip
    (node_modules / "inner").symlink_to(store, target_is_directory=True)

    packages = {p.name: p for p in list_packages(node_modules, NpmOptions())}
    assert sorted(packages) == ["eventemitter3", "inner", "sneaky"]
    area = node_modules.resolve()
    _, entries = package_entries(packages["sneaky"], area, NpmOptions())
    assert not [e for e in entries if e.is_api]
    assert read_within(sneaky / "index.d.ts", area, 10_000) is None
    _, entries = package_entries(packages["inner"], area, NpmOptions())
    assert [e.name for e in entries if e.is_api] == ["hello"]


def test_oversize_files_are_skipped(project: Path) -> None:
    node_modules = project / "node_modules"
    big = DTS + "// padding\n" * 2_000
    add_package(
        node_modules,
        "huge",
        "1.0.0",
        {"index.d.ts": big, "README.md": "# huge\n\n" + "x " * 20_000},
    )
    options = NpmOptions(max_file_bytes=len(big) - 1)
    packages = {p.name: p for p in list_packages(node_modules, options)}
    meta, entries = package_entries(packages["huge"], node_modules.resolve(), options)
    assert entries == [] and meta.name == "huge"  # neither the .d.ts nor the README
    roomy = NpmOptions(max_file_bytes=len(big) + 100_000)
    _, entries = package_entries(packages["huge"], node_modules.resolve(), roomy)
    assert [e.name for e in entries if e.is_api] == ["hello"]


def test_a_huge_package_json_is_not_a_package(project: Path) -> None:
    node_modules = project / "node_modules"
    add_package(node_modules, "bloated", "1.0.0", files=None, description="x" * 5_000)
    assert _names(node_modules, NpmOptions(max_file_bytes=1_000)) == []  # eventemitter3's: 1.6 KB
    assert "bloated" in _names(node_modules)


def test_node_modules_is_looked_for_from_the_folder_up_to_the_project_root(tmp_path: Path) -> None:
    root = tmp_path / "monorepo"
    app = root / "apps" / "web" / "src"
    app.mkdir(parents=True)
    folders = search_folders(app, root)
    assert folders == (app, app.parent, root / "apps", root)
    assert find_node_modules(folders) is None
    (root / "node_modules").mkdir()
    assert find_node_modules(folders) == root / "node_modules"
    (app.parent / "node_modules").mkdir()
    assert find_node_modules(folders) == app.parent / "node_modules"  # the nearest
    assert search_folders(tmp_path, root) == (tmp_path,)  # not inside the root: itself only
