"""`python -m codeweaver` given arguments that are not UTF-8, as a shell passes them: a
clear error naming the bad byte, exit code 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_real_invalid_bytes_in_argv_give_a_clear_error(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONUTF8": "1",
        # Were the argument let through, the scripted model would answer, not a real one.
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "none",
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
    }
    for args in (
        [b"ask", b"How do I reverse a list?", b"--thread", b"id\xff"],
        [b"ask", b"How do I sort a list \xff\xfe in Python"],
    ):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"codeweaver", *args],
            capture_output=True,
            env=env,
            timeout=120,
        )
        stderr = " ".join(done.stderr.decode().split())
        assert done.returncode == 2, stderr
        assert "Traceback" not in stderr
        assert "error: the argument" in stderr and "is not valid UTF-8 text" in stderr
        assert "\\xff" in stderr  # the bad byte is named
