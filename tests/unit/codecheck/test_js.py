"""The JavaScript/TypeScript check: names imported from a module that does not export them,
and members a module object lacks, are flagged; unknown modules, a module object shadowed by
a local, a default export's own members and statements that do not parse never are."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeweaver.codecheck import NpmApi, check_js
from codeweaver.codecheck.answers import check_answer_code
from tests.unit.codecheck.test_npm_api import node_modules  # noqa: F401  (a fixture)


@pytest.fixture
def npm(node_modules: Path) -> NpmApi:  # noqa: F811
    return NpmApi(node_modules)


def flagged(code: str, npm: NpmApi) -> list[tuple[str, int]]:
    report = check_js(code, npm)
    assert report.parsed, code
    return [(f.name, f.line) for f in report.findings]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import { parse, parseAll } from 'esm';", [("esm.parseAll", 1)]),
        ("import type { Options, Option } from 'esm';", [("esm.Option", 1)]),
        ("import * as esm from 'esm';\nesm.parse('x');\nesm.parsee('x');", [("esm.parsee", 3)]),
        ("const { parse, load: l } = require('esm');", [("esm.load", 1)]),
        ("const cjs = require('cjs');\nconst app = cjs();\napp.use(cjs.json());\n"
         "app.use(cjs.bodyParser());", [("cjs.bodyParser", 4)]),
        ("import cjs from 'cjs';\ncjs.static('public');", [("cjs.static", 2)]),
        ("import fs from 'node:fs';\nfs.readFileAsync('a');", [("node:fs.readFileAsync", 2)]),
        ("import { createRoot, render } from 'sub/client';", [("sub/client.render", 1)]),
        # JSX and TypeScript generics both parse.
        ("import * as esm from 'esm';\nconst A = () => <div>{esm.nope}</div>;",
         [("esm.nope", 2)]),
        ("import * as esm from 'esm';\nfunction f<T>(x: T): T { return esm.nah(x); }",
         [("esm.nah", 2)]),
    ],
)  # fmt: skip
def test_missing_exports_are_flagged_where_they_are_used(
    code: str, expected: list[tuple[str, int]], npm: NpmApi
) -> None:
    assert flagged(code, npm) == expected


@pytest.mark.parametrize(
    "code",
    [
        "import { get, whatever } from 'typed';",  # an `export =` of a typed value
        "import { $, jQuery } from 'globals';",  # a global script
        "import { a, b } from 'broken';",  # an `export *` not found
        "import { x } from 'not-installed';\nimport { y } from './local';",
        # a module object shadowed by a parameter or a local of the same name
        "import * as esm from 'esm';\nfunction f(esm) { return esm.anything; }",
        "const fs = require('fs');\n{ const fs = other(); fs.anything(); }",
        # a default export's own members are a type's: unknown
        "import common from 'shared';\ncommon.toFixed(2);",
        # what every object and every function object has
        "import * as esm from 'esm';\nesm.toString();\nimport cjs from 'cjs';\ncjs.name;",
        "import esm from 'esm';\nesm['parsee'];",  # computed: not read
    ],
)
def test_what_cannot_be_known_is_never_flagged(code: str, npm: NpmApi) -> None:
    assert flagged(code, npm) == []


def test_a_block_that_is_not_code_is_not_parsed(npm: NpmApi) -> None:
    report = check_js("This is prose, not code: { [ ( at all", npm)
    assert not report.parsed and report.findings == ()


def test_a_broken_statement_does_not_hide_the_rest(npm: NpmApi) -> None:
    code = "import { parse, nothere } from 'esm';\nconst a = ;\nconst b = 1;\nconst c = 2;"
    assert flagged(code, npm) == [("esm.nothere", 1)]


def test_an_answer_checks_its_js_blocks_but_not_the_users_own_lines(npm: NpmApi) -> None:
    answer = (
        "Replace\n\n```js\nimport { parseAll } from 'esm';\n```\n\nwith\n\n"
        "```ts\nimport { parse, parseOne } from 'esm';\n```\n"
    )
    question = "Why does this fail?\n    import { parseAll } from 'esm';\n"
    check = check_answer_code(answer, None, npm, question)
    assert [(f.block, f.finding.name) for f in check.findings] == [(2, "esm.parseOne")]
    assert check.findings[0].close == ("parse",)
    assert "installed here" in check.findings[0].finding.message
    assert check.blocks == 2 and check.uses == 3
