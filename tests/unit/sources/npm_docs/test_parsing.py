"""What is read of a package: `package.json`, README sections and the `.d.ts` API."""

from __future__ import annotations

from pathlib import Path

from codeweaver.sources.npm_docs.collect import package_entries, types_entries
from codeweaver.sources.npm_docs.discover import licence_of, list_packages, package_url
from codeweaver.sources.npm_docs.dts import parse_dts
from codeweaver.sources.npm_docs.model import NpmOptions
from codeweaver.sources.npm_docs.readme import split_readme
from tests.unit.sources.npm_docs.conftest import FIXTURE, add_package

EE = FIXTURE / "node_modules" / "eventemitter3"


def _apis(source: str) -> dict[str, tuple[str, str, str]]:
    """name -> (kind, signature, doc) of a `.d.ts` text."""
    return {a.name: (a.kind, a.signature, a.doc) for a in parse_dts(source.encode()).apis}


# --------------------------------------------------------------------------- .d.ts


def test_the_real_declarations_keep_methods_interfaces_types_and_their_jsdoc() -> None:
    apis = _apis((EE / "index.d.ts").read_text(encoding="utf-8"))
    kind, signature, doc = apis["EventEmitter.once"]
    assert kind == "method"
    assert doc == "Add a one-time listener for a given event."
    assert signature.startswith("once<T extends EventEmitter.EventNames<EventTypes>>(event: T,")
    assert signature.endswith("context?: Context): this")
    kind, signature, doc = apis["EventEmitter"]
    assert kind == "class" and signature.startswith("class EventEmitter<")
    assert doc.startswith("Minimal `EventEmitter` interface that is molded against the Node.js")
    # The merged namespace's members, exported with the class by `export { EventEmitter }`.
    assert apis["EventEmitter.ListenerFn"][0] == "interface"
    assert apis["EventEmitter.ListenerFn"][1] == (
        "interface ListenerFn<Args extends any[] = any[]> { (...args: Args): void; }"
    )
    kind, signature, doc = apis["EventEmitter.ValidEventTypes"]
    assert (kind, signature) == ("type", "type ValidEventTypes = string | symbol | object")
    assert "`object` should be in either of the following forms:" in doc
    assert "'event-with-parameters': any[]" in doc  # the example keeps its indentation
    assert apis["EventEmitter.addListener"][2] == ""  # undocumented methods stay, by name
    assert "EventEmitter.prefixed" not in apis  # an undocumented field says nothing


FUNCTIONS = """\
import { Options } from './options';
/** @license MIT */

/**
 * Parse a duration like `2 days` into milliseconds.
 * See {@link format} and {@link https://example.com the docs}.
 * @param value - the text to parse
 * @returns the number of milliseconds
 */
export declare function parse(value: string): number;
/** Format milliseconds as text. */
export declare function parse(value: number, options?: Options): string;

declare function helper(): void;
declare function format(ms: number): string;
/** @internal */
export declare function secret(): void;
export { format };

export declare class Clock {
  /** Start the clock. */
  start(): void;
  private tick(): void;
  /** The current tick. */
  readonly now: number;
  size: number;
  constructor(rate?: number);
}

export interface Options {
  /** Use long names ("2 days" rather than "2d"). */
  long?: boolean;
  short?: boolean;
  /** Called on every change. */
  onChange?: (value: number) => void;
}

export type Unit = 'ms' | 's' | 'm';
export declare enum Level { Low = 1, High }
export declare const VERSION: string;
"""


def test_exported_functions_overloads_classes_and_interfaces() -> None:
    apis = _apis(FUNCTIONS)
    kind, signature, doc = apis["parse"]
    assert kind == "function"
    assert signature.splitlines() == [
        "function parse(value: string): number",
        "function parse(value: number, options?: Options): string",
    ]  # overloads merged, one per line
    assert doc.startswith(
        "Parse a duration like `2 days` into milliseconds.\nSee format and the docs."
    )
    assert "@param value - the text to parse" in doc and doc.endswith(
        "Format milliseconds as text."
    )
    assert apis["format"][0] == "function"  # exported by `export { format }`
    assert "helper" not in apis and "secret" not in apis  # not exported; @internal
    assert apis["Clock"] == ("class", "class Clock\nconstructor(rate?: number)", "")
    assert apis["Clock.start"] == ("method", "start(): void", "Start the clock.")
    assert apis["Clock.now"] == ("property", "readonly now: number", "The current tick.")
    assert "Clock.tick" not in apis and "Clock.size" not in apis  # private; undocumented
    assert apis["Options.long"][2] == 'Use long names ("2 days" rather than "2d").'
    assert apis["Options.onChange"][0] == "method"  # a function-valued property is called
    assert "Options.short" not in apis
    assert apis["Unit"] == ("type", "type Unit = 'ms' | 's' | 'm'", "")
    assert apis["Level"][1] == "enum Level { Low, High }"
    assert apis["VERSION"][:2] == ("variable", "const VERSION: string")
    assert parse_dts(FUNCTIONS.encode()).references == ["./options"]


def test_global_scripts_ambient_modules_and_references() -> None:
    source = """\
/// <reference path="globals.d.ts" />
/** Milliseconds from a duration. */
declare function ms(value: string): number;
declare module "node:fs" {
    /** Read a whole file. */
    export function readFile(path: string): Promise<string>;
}
declare global {
    interface Window { /** The app's version. */ appVersion: string }
}
"""
    parsed = parse_dts(source.encode())
    apis = {a.name: a for a in parsed.apis}
    assert apis["ms"].doc == "Milliseconds from a duration."  # a script's globals are all API
    assert apis["fs.readFile"].kind == "function"  # `node:fs` is imported as `fs` too
    assert apis["Window.appVersion"].doc == "The app's version."
    assert parsed.references == ["globals.d.ts"]


def test_a_broken_file_still_yields_what_parses() -> None:
    apis = _apis("export declare function ok(): void;\nexport default function (: ;\n")
    assert "ok" in apis


# --------------------------------------------------------------------------- README


def test_the_readme_is_split_into_sections_by_heading() -> None:
    text = (EE / "README.md").read_text(encoding="utf-8")
    sections = split_readme(text, max_sections=50, max_chars=4000)
    intro, *rest = sections
    assert intro.path == () and intro.text.startswith("EventEmitter3 is a high performance")
    assert "img.shields.io" not in intro.text  # badges dropped
    by_anchor = {s.anchor: s for s in rest}
    contextual = by_anchor["contextual-emits"]
    assert contextual.path == ("Usage", "Contextual emits")
    assert "EE.once('event-name', emitted, context);" in contextual.text
    assert set(by_anchor) == {
        "installation",
        "cdn",
        "usage",
        "contextual-emits",
        "tests-and-benchmarks",
    }
    assert all(s.text for s in sections)


def test_headings_in_code_are_code_and_repeated_anchors_are_numbered() -> None:
    text = (
        "# pkg\n\nIntro line of the package, long enough.\n\n## Usage\n\n"
        "```sh\n# not a heading\nnpm install pkg --save\n```\n\n"
        "Options\n-------\n\nThe options are described here at length.\n\n"
        "## Usage\n\nA second usage section with enough words in it.\n"
    )
    sections = split_readme(text, max_sections=10, max_chars=4000)
    assert [(s.path, s.anchor) for s in sections] == [
        ((), ""),
        (("Usage",), "usage"),
        (("Options",), "options"),
        (("Usage",), "usage-1"),
    ]
    assert "# not a heading" in sections[1].text


# --------------------------------------------------------------------------- package.json


def test_package_json_gives_url_licence_and_types_entry() -> None:
    (package,) = list_packages(FIXTURE / "node_modules", NpmOptions())
    assert (package.name, package.version) == ("eventemitter3", "5.0.1")
    meta, entries = package_entries(package, (FIXTURE / "node_modules").resolve(), NpmOptions())
    assert meta.url == "https://github.com/primus/eventemitter3"  # from git://….git
    assert meta.licence == "MIT"
    assert meta.description.startswith("EventEmitter3 focuses on performance")
    overview = entries[0]
    assert (overview.kind, overview.name, overview.file) == (
        "package",
        "eventemitter3",
        "README.md",
    )
    assert overview.doc.startswith("EventEmitter3 focuses on performance")
    assert {e.file for e in entries if e.is_api} == {"index.d.ts"}


def test_repository_and_licence_forms() -> None:
    assert package_url({"repository": "github:colinhacks/zod"}, "zod", "3") == (
        "https://github.com/colinhacks/zod"
    )
    assert package_url(
        {"repository": {"url": "git+ssh://git@github.com/facebook/react.git",
                        "directory": "packages/react"}}, "react", "18.3.1",
    ) == "https://github.com/facebook/react/tree/HEAD/packages/react"  # fmt: skip
    assert package_url({"homepage": "https://zod.dev"}, "zod", "3") == "https://zod.dev"
    assert package_url({}, "@scope/x", "1.0.0") == "https://www.npmjs.com/package/@scope/x/v/1.0.0"
    assert licence_of({"license": "(MIT OR Apache-2.0)"}) == "(MIT OR Apache-2.0)"
    assert licence_of({"license": {"type": "ISC"}}) == "ISC"
    assert licence_of({"licenses": [{"type": "MIT"}, {"type": "GPL-2.0"}]}) == "MIT OR GPL-2.0"
    assert licence_of({"license": "SEE LICENSE IN LICENSE.md"}) == ""


def test_the_types_entry_and_the_files_it_references(tmp_path: Path) -> None:
    node_modules = tmp_path / "node_modules"
    files = {
        "dist/index.d.mts": 'export * from "./api.mjs";\n',
        "dist/api.d.mts": "/** Add two numbers. */\nexport declare function add(): number;",
        "dist/other.d.ts": "/** Never referenced. */\nexport declare function unused(): void;\n",
    }
    conditions = {"import": {"types": "./dist/index.d.mts", "default": "./dist/index.mjs"}}
    add_package(node_modules, "typed", files=files, exports={".": conditions})
    (package,) = list_packages(node_modules, NpmOptions())
    assert types_entries(package.manifest)[0] == "dist/index.d.mts"
    _, entries = package_entries(package, node_modules.resolve(), NpmOptions())
    apis = {e.name: e for e in entries if e.is_api}
    assert apis["add"].file == "dist/api.d.mts" and apis["add"].doc == "Add two numbers."
    assert "unused" not in apis
