"""The import contracts in pyproject.toml hold: no import runs upward through the layers,
and the product never imports the measurement package; each catches its breach."""

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


def copy_sources(tmp_path: Path) -> Path:
    for package in ("codeweaver", "codeweaver_eval"):
        shutil.copytree(ROOT / "src" / package, tmp_path / package)
    return tmp_path


def test_the_contracts_hold() -> None:
    result = lint(ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_a_source_importing_the_service_breaks_the_contract(tmp_path: Path) -> None:
    copy_sources(tmp_path)
    scoring = tmp_path / "codeweaver" / "sources" / "scoring.py"
    scoring.write_text(scoring.read_text() + "\nimport codeweaver.api.app  # upward\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "codeweaver.sources.scoring -> codeweaver.api.app" in result.stdout


def test_the_product_importing_the_measurement_package_breaks_the_contract(
    tmp_path: Path,
) -> None:
    copy_sources(tmp_path)
    doctor = tmp_path / "codeweaver" / "cli" / "doctor.py"
    doctor.write_text(doctor.read_text() + "\nimport codeweaver_eval.cli.app  # measurement\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "The product never imports the measurement package BROKEN" in result.stdout
    assert "codeweaver.cli.doctor -> codeweaver_eval.cli.app" in result.stdout
