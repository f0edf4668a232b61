"""`codeweaver setup` fetches Python's docs without root when they are missing, and
`codeweaver doctor` says it can (fake apt tools on PATH, no network)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver.cli.doctor import collect_report
from codeweaver.config import Settings
from codeweaver.sources.python_docs import sections
from tests.unit.sources.python_docs import fake_apt

OWN = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    env = {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        "CODEWEAVER_SOURCES": "python_docs",
        "CODEWEAVER_CACHE": "false",
        "CODEWEAVER_PROJECT": str(tmp_path),  # no environment: CodeWeaver's own Python
        "FAKE_DOCS_VERSION": f"{OWN}.1",
    }
    fake_apt.install(tmp_path / "bin", tmp_path / "calls.jsonl", env)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("VIRTUAL_ENV", "CODEWEAVER_PYTHON_DOCS", "FAKE_APT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    # Whatever docs this machine has installed, only the cache's count here.
    system = sections.candidate_dirs

    def cache_only(version: str, cache_dir: Path | None = None) -> list[Path]:
        return [d for d in system(version, cache_dir) if not str(d).startswith("/usr/")]

    monkeypatch.setattr(sections, "candidate_dirs", cache_only)
    return tmp_path / "calls.jsonl"


def _python_docs_row() -> str:
    row: str = collect_report(Settings())["sources"]["python_docs"]
    return row


def test_setup_fetches_the_missing_docs_and_indexes_them(log: Path, tmp_path: Path) -> None:
    before = _python_docs_row()
    assert before.startswith(f"skipped: Python {OWN}'s docs are not installed")
    assert before.endswith("or, without root, `codeweaver setup` downloads them into the cache")

    result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 0, result.output
    assert [c["argv"][0] for c in fake_apt.calls(log)] == ["apt-cache", "apt-get", "dpkg-deb"]
    out = result.output
    html = tmp_path / "cache" / "python-docs" / OWN / "html"
    assert f"python docs: Python {OWN}'s HTML docs are not on this machine; fetching" in out
    assert "12.6 MB to download" in out and "downloaded" in out and "unpacked" in out
    assert f"python docs: Python {OWN}.1's docs ready in {html}" in out.replace("\n", "")
    assert "ready in" in out
    # The source finds them in the settings' cache folder, and its index was built.
    assert _python_docs_row() == "ready"
    assert any((tmp_path / "cache" / "python_docs").iterdir())

    again = CliRunner().invoke(app, ["setup"])
    assert again.exit_code == 0 and "python docs:" not in again.output  # nothing missing
    assert len(fake_apt.calls(log)) == 3


@pytest.mark.parametrize(
    ("option", "env"),
    [
        ("--no-python-docs", {}),
        (None, {"CODEWEAVER_PYTHON_DOCS": "/nowhere"}),
        (None, {"CODEWEAVER_SOURCES": "none"}),
    ],
)
def test_setup_leaves_the_docs_alone_when_told_or_named_or_disabled(
    log: Path, monkeypatch: pytest.MonkeyPatch, option: str | None, env: dict[str, str]
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["setup", *([option] if option else [])])
    assert result.exit_code == 0, result.output
    assert fake_apt.calls(log) == [] and "python docs:" not in result.output


def test_setup_goes_on_with_a_clear_warning_when_the_package_is_unknown(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_APT", "unknown")
    result = CliRunner().invoke(app, ["setup"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert f"warning: python docs: this system's package lists have no python{OWN}-doc" in out
    assert "Setup goes on without them." in out
    assert "ready in" in out


def test_doctor_says_when_the_docs_cannot_be_fetched_here(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    row = _python_docs_row()
    assert "sudo apt install" in row  # the way with root stays
    assert row.endswith("; no apt-cache, apt-get, dpkg-deb here to fetch them without root")
    monkeypatch.setenv("CODEWEAVER_PYTHON_DOCS", str(tmp_path))
    assert "without root" not in _python_docs_row()  # a folder named: that is the answer
