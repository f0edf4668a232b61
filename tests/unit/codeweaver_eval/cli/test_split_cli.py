"""`codeweaver eval split`: several files, a seeded sample, and who decided each plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app

FIXTURES = Path(__file__).parents[3] / "fixtures"
SINGLE = FIXTURES / "split" / "single_real.jsonl"
JOINED = FIXTURES / "split" / "joined.jsonl"


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CODEWEAVER_MODEL", "scripted:echo")
    monkeypatch.setenv("CODEWEAVER_SOURCES", "none")
    monkeypatch.chdir(tmp_path)


def split(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["eval", "split", *args, "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.stdout)
    return report


def test_rules_alone_on_a_sample_of_both_fixtures() -> None:
    report = split("-f", str(SINGLE), "-f", str(JOINED), "--by", "rules", "--sample", "15")
    assert report["total"] == 30
    assert report["decided_by"] == {"rules": 30, "model": 0}
    assert report["case_accuracy"] == 1.0


def test_the_model_decides_only_what_the_rules_leave() -> None:
    # split_sample.jsonl line 7 ("… Why, and how do I stop it?") is the one message the
    # rules leave; scripted:echo lists nothing usable, so the plan falls back to single.
    report = split("-f", str(FIXTURES / "split_sample.jsonl"))
    assert report["decided_by"] == {"rules": 12, "model": 1}
    rules_only = split("-f", str(FIXTURES / "split_sample.jsonl"), "--by", "rules")
    assert rules_only["decided_by"] == {"rules": 12, "model": 1}
    per_case = rules_only["per_case"]
    assert isinstance(per_case, dict)
    assert per_case["single_topic"]["decided_by"] == {"rules": 5, "model": 1}


def test_the_table_shows_who_decided() -> None:
    result = CliRunner().invoke(
        app, ["eval", "split", "-f", str(SINGLE), "--by", "rules", "-n", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "decided by the rules: 5, by the model: 0" in result.stdout
    assert "rules only" in result.stdout
