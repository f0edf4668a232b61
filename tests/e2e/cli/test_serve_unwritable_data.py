"""`codeweaver serve` with a data folder it cannot write: one line that says so and how
to fix it, exit code 2, no traceback (the read-only data folder of an outside test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXE = Path(sys.executable).with_name("codeweaver")


def test_a_data_folder_that_cannot_be_made_is_one_clear_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    env = {
        **os.environ,
        # Under a regular file: the folder cannot be created, whoever runs the test
        # (chmod does not stop root, a read-only mount needs privileges).
        "CODEWEAVER_DATA_DIR": str(blocker / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
    }
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [str(EXE), "serve", "--port", "8799"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    message = " ".join(done.stderr.split())
    assert f"cannot create the data directory {blocker / 'data'}" in message
    assert "set CODEWEAVER_DATA_DIR to a writable folder" in message
