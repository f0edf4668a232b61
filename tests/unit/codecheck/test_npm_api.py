"""What an npm module exports, read from `node_modules`: ES exports across `export *`
(relative and from another package), `export =` of a namespace, `@types` packages, subpaths
from the `exports` map and Node's built-ins; anything not fully read is incomplete."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.codecheck import NpmApi
from tests.unit.codecheck.files import write_tree

FILES: dict[str, str] = {
    # An ES module: declarations, a clause, a re-export, `export *` of a file and a package.
    "esm/package.json": {"name": "esm", "version": "2.1.0", "types": "./dist/index.d.ts"},
    "esm/dist/index.d.ts": (
        "import { Base } from './base';\n"
        "export declare function parse(text: string): Base;\n"
        "export declare const version: string, build: number;\n"
        "export interface Options { strict?: boolean }\n"
        "declare class Hidden {}\n"
        "declare function local(): void;\n"
        "export { local as helper };\n"
        "export { default as stringify } from './stringify';\n"
        "export * as tools from './tools';\n"
        "export * from './more';\n"
        "export * from 'shared';\n"
    ),
    "esm/dist/more.d.ts": "export declare function more(): void;\nexport * from './deep/index';\n",
    "esm/dist/deep/index.d.ts": "export type Deep = string;\nexport default function x(): void;\n",
    "shared/package.json": {"name": "shared", "version": "1.0.0", "types": "index.d.ts"},
    "shared/index.d.ts": "export declare const common: number;\nexport default common;\n",
    # `export =` of a function merged with a namespace (the shape of `@types/express`).
    "@types/cjs/package.json": {"name": "@types/cjs", "version": "4.0.1", "types": "index.d.ts"},
    "@types/cjs/index.d.ts": (
        "declare function cjs(): cjs.App;\n"
        "declare namespace cjs {\n"
        "    interface App { listen(port: number): void }\n"
        "    var json: () => void;\n"
        "    function Router(): void;\n"
        "    export import Inner = Other.Inner;\n"
        "}\n"
        "export = cjs;\n"
    ),
    "cjs/package.json": {"name": "cjs", "version": "4.3.0", "main": "index.js"},
    "cjs/index.js": "module.exports = function () {};\n",
    # `export =` of a value typed by an interface: its members are a type's, unknown here.
    "typed/package.json": {"name": "typed", "version": "1.0.0", "types": "index.d.ts"},
    "typed/index.d.ts": (
        "interface Static { get(url: string): void }\n"
        "declare const typed: Static;\nexport = typed;\n"
    ),
    # A global script declares no module.
    "globals/package.json": {"name": "globals", "version": "1.0.0", "types": "index.d.ts"},
    "globals/index.d.ts": "declare function $(selector: string): void;\n",
    # `export *` of a file that is not there: what it would add is unknown.
    "broken/package.json": {"name": "broken", "version": "1.0.0", "types": "index.d.ts"},
    "broken/index.d.ts": "export declare const a: number;\nexport * from './gone';\n",
    # A subpath mapped by `exports`, and one only present as a file.
    "sub/package.json": {
        "name": "sub",
        "version": "3.0.0",
        "types": "index.d.ts",
        "exports": {".": {"types": "./index.d.ts"}, "./client": {"types": "./lib/client.d.ts"}},
    },
    "sub/index.d.ts": "export declare function main(): void;\n",
    "sub/lib/client.d.ts": "export declare function createRoot(): void;\n",
    "sub/server.d.ts": "export declare function serve(): void;\n",
    # Node's built-ins, declared as ambient modules under both spellings.
    "@types/node/package.json": {"name": "@types/node", "version": "22.1.0", "types": "index.d.ts"},
    "@types/node/index.d.ts": '/// <reference path="fs.d.ts" />\n',
    "@types/node/fs.d.ts": (
        'declare module "node:fs" {\n'
        "    export function readFileSync(path: string): string;\n"
        "    function existsSync(path: string): boolean;\n"
        "    export namespace promises { function readFile(path: string): Promise<string>; }\n"
        "}\n"
        'declare module "fs" {\n    export * from "node:fs";\n}\n'
    ),
}


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("project") / "node_modules", FILES)


@pytest.fixture
def npm(node_modules: Path) -> NpmApi:
    return NpmApi(node_modules)


def test_an_es_module_exports_across_files_and_packages(npm: NpmApi) -> None:
    found = npm.exports("esm")
    assert found is not None and found.complete
    assert found.names == {
        "parse", "version", "build", "Options", "helper", "stringify", "tools", "more",
        "Deep", "common",
    }  # fmt: skip
    # Neither a local declaration nor a star-exported file's or package's default.
    assert (found.package, found.version) == ("esm", "2.1.0")


def test_export_equals_a_namespace_gives_its_members_and_the_runtime_version(npm: NpmApi) -> None:
    found = npm.exports("cjs")
    assert found is not None and found.complete and found.callable_object
    assert found.names == {"App", "json", "Router", "Inner"}
    assert (found.package, found.version) == ("cjs", "4.3.0")  # not `@types/cjs` 4.0.1


@pytest.mark.parametrize("module", ["typed", "globals", "broken"])
def test_what_cannot_be_read_whole_is_incomplete(npm: NpmApi, module: str) -> None:
    found = npm.exports(module)
    assert found is not None and not found.complete


def test_subpaths_come_from_the_exports_map_or_the_package_files(npm: NpmApi) -> None:
    client, server = npm.exports("sub/client"), npm.exports("sub/server")
    assert client is not None and client.names == {"createRoot"}
    assert server is not None and server.names == {"serve"}
    assert npm.exports("sub/missing") is None


def test_node_builtins_under_either_spelling(npm: NpmApi) -> None:
    for spec in ("fs", "node:fs"):
        found = npm.exports(spec)
        assert found is not None and found.complete, spec
        assert found.names == {"readFileSync", "existsSync", "promises"}, spec
        assert (found.package, found.version) == ("@types/node", "22.1.0")
    assert npm.exports("node:nothing") is None


@pytest.mark.parametrize("spec", ["not-installed", "./local", "../up", "/abs", "http://x"])
def test_modules_not_installed_or_not_packages_are_unknown(npm: NpmApi, spec: str) -> None:
    assert npm.exports(spec) is None
