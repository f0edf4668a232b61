"""The import contract in pyproject.toml holds, and it catches an import that runs upward."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(source_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_layers_hold() -> None:
    result = lint(ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_a_source_importing_the_service_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src" / "codeweaver", tmp_path / "codeweaver")
    scoring = tmp_path / "codeweaver" / "sources" / "scoring.py"
    scoring.write_text(scoring.read_text() + "\nimport codeweaver.api.app  # upward\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "codeweaver.sources.scoring -> codeweaver.api.app" in result.stdout
