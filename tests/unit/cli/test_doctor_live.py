"""`codeweaver doctor --live` against loopback Stack Exchange and GitHub APIs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeweaver.cli.app import app
from tests.unit.sources.test_probe import Reply, fixture, github_ok, serve, stackexchange_ok


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for key in ("TAVILY_API_KEY", "STACKEXCHANGE_KEY", "GITHUB_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    values = {
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_MODEL": "scripted:echo",
        # web (ddgs) stays off: it would go to the internet.
        "CODEWEAVER_SOURCES": "stackoverflow,github",
        "GITHUB_TOKEN": "test",
        "COLUMNS": "250",  # one table row per line, so rows can be read back
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return values


def _row(output: str, source: str) -> list[str]:
    """The cells of the live table's row for `source`."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if cells and cells[0] == source and len(cells) == 6:
            return cells
    raise AssertionError(f"no live row for {source} in:\n{output}")


def test_all_configured_sources_answer(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # tavily_docs is enabled but has no key: shown as not configured, never called.
    monkeypatch.setenv("CODEWEAVER_SOURCES", "stackoverflow,github,tavily_docs")
    with serve(stackexchange_ok()) as se, serve(github_ok()) as gh:
        monkeypatch.setenv("CODEWEAVER_STACKEXCHANGE_URL", se.url)
        monkeypatch.setenv("CODEWEAVER_GITHUB_API_URL", gh.url)
        result = CliRunner().invoke(app, ["doctor", "--live"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "online sources (one live search each)" in out
    so = _row(out, "stackoverflow")
    assert so[1] == "ok" and so[2].endswith("s") and so[3] == "3"
    assert so[4] == "286 of 300 requests today"
    github = _row(out, "github")
    assert github[1:2] == ["ok"] and github[3:5] == ["3", "9 of 10 searches this minute"]
    tavily = _row(out, "tavily_docs")
    assert tavily[1] == "not configured" and tavily[5] == "TAVILY_API_KEY not set"
    assert _row(out, "web")[1] == "disabled"
    assert "installed_docs" not in out.split("online sources")[1]  # offline: not probed
    assert "failed" not in out


def test_a_failing_source_sets_the_exit_code(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = {
        "x-ratelimit-limit": "10",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(time.time()) + 3600),
    }
    limited = {
        "/search/code": Reply(fixture("github/primary_rate_limit.json"), 403, headers=headers)
    }
    with serve(stackexchange_ok()) as se, serve(limited) as gh:
        monkeypatch.setenv("CODEWEAVER_STACKEXCHANGE_URL", se.url)
        monkeypatch.setenv("CODEWEAVER_GITHUB_API_URL", gh.url)
        result = CliRunner().invoke(app, ["doctor", "--live"])
    assert result.exit_code == 1, result.output
    github = _row(result.stdout, "github")
    assert github[1] == "failed"
    assert github[4] == "0 of 10 searches this minute"
    assert github[5].startswith("rate-limited: github GitHub rate limit used up")
    assert _row(result.stdout, "stackoverflow")[1] == "ok"
    assert "failed: github" in result.stdout


def test_server_text_is_not_read_as_markup(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b'{"message": "[bold]Bad[/bold] credentials [/]"}'
    with serve({"/search/code": Reply(body, status=401)}) as gh:
        monkeypatch.setenv("CODEWEAVER_SOURCES", "github")
        monkeypatch.setenv("CODEWEAVER_GITHUB_API_URL", gh.url)
        result = CliRunner().invoke(app, ["doctor", "--live"])
    assert result.exit_code == 1, result.output
    reason = _row(result.stdout, "github")[5]
    assert reason.startswith("bad key: HTTP 401 from github")
    assert "[bold]Bad[/bold] credentials [/]" in reason


def test_dns_failure_json(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_SOURCES", "stackoverflow")
    monkeypatch.setenv("CODEWEAVER_STACKEXCHANGE_URL", "http://codeweaver-nonexistent.invalid")
    result = CliRunner().invoke(app, ["doctor", "--live", "--json"])
    assert result.exit_code == 1, result.output
    payload = json.loads(result.stdout)
    assert "sources" in payload and "keys" in payload  # the offline report is still there
    live = {entry["source"]: entry for entry in payload["live"]}
    so = live["stackoverflow"]
    assert so["result"] == "failed" and so["ok"] is False and so["kind"] == "dns"
    assert so["reason"].startswith("DNS failure: host name does not resolve")
    assert isinstance(so["latency"], float)
    assert live["github"]["result"] == "disabled"


def test_plain_doctor_stays_offline(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(stackexchange_ok()) as se:
        monkeypatch.setenv("CODEWEAVER_STACKEXCHANGE_URL", se.url)
        result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert "live" not in json.loads(result.stdout)
    assert se.seen == []
