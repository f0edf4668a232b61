"""`codeweaver.words` is the bottom layer: it imports nothing else of the package."""

from __future__ import annotations

import ast
from pathlib import Path

import codeweaver.words

PACKAGE = Path(codeweaver.words.__file__).parent


def test_words_import_only_words() -> None:
    for module in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] == "codeweaver":
                    assert name.startswith("codeweaver.words"), f"{module.name} imports {name}"
