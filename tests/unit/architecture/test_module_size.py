"""Every module of the package stays small enough to read in one sitting: 400 lines at most."""

from __future__ import annotations

from pathlib import Path

import codeweaver

PACKAGE = Path(codeweaver.__file__).parent
MAX_LINES = 400


def test_no_module_exceeds_the_limit() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100  # the package itself, not an empty folder
    over = {
        str(module.relative_to(PACKAGE)): lines
        for module in modules
        if (lines := len(module.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not over, f"modules over {MAX_LINES} lines: {over}"
