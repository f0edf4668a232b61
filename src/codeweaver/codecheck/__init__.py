"""Checks the code an answer writes against the APIs installed in the user's project:
`uses` reads what a Python block uses, `api` knows the installed APIs (read statically),
`findings` reports only what is certainly wrong."""

from codeweaver.codecheck.answers import AnswerCheck, BlockFinding, CodeChecker, with_notes
from codeweaver.codecheck.api import ApiIndex
from codeweaver.codecheck.findings import CodeReport, Finding, check_python

__all__ = [
    "AnswerCheck", "ApiIndex", "BlockFinding", "CodeChecker", "CodeReport", "Finding",
    "check_python", "with_notes",
]  # fmt: skip
