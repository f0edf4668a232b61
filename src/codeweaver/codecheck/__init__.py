"""Checks the code an answer writes against the APIs installed in the user's project:
`uses` reads what a Python block uses, `api` knows the installed APIs (read statically),
`findings` reports only what is certainly wrong; `js` and `npm_api` do the same for
JavaScript and TypeScript against the `.d.ts` files of `node_modules`."""

from codeweaver.codecheck.answers import AnswerCheck, BlockFinding, CodeChecker, with_notes
from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.findings import CodeReport, Finding, check_python
from codeweaver.codecheck.js import check_js
from codeweaver.codecheck.npm_api import ModuleExports, NpmApi

__all__ = [
    "AnswerCheck", "ApiIndex", "BlockFinding", "CodeChecker", "CodeReport", "Finding",
    "ModuleExports", "NpmApi", "check_js", "check_python", "with_notes",
]  # fmt: skip
