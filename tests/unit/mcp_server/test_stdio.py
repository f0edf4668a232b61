"""The CLI imports the MCP SDK only when `codeweaver mcp` runs (the stdio server itself:
`tests/e2e/mcp_server/test_stdio.py`)."""

from __future__ import annotations

import sys


def test_the_cli_does_not_import_the_sdk_until_mcp_runs() -> None:
    import subprocess

    code = (
        "import sys, codeweaver.cli.app\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
