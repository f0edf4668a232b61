"""The key status: the settings' own secrets and those the registered sources name."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from codeweaver.sources.keys import key_status
from tests.fakes import make_settings

SOURCE_KEYS = {"GITHUB_TOKEN", "STACKEXCHANGE_KEY", "TAVILY_API_KEY"}


def test_every_secret_is_listed_as_set_or_not_never_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (*SOURCE_KEYS, "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    settings = make_settings(tmp_path, github_token=SecretStr("ghp_value"))
    status = key_status(settings)
    assert status.keys() >= SOURCE_KEYS | {"OPENAI_API_KEY", "REDIS_URL"}
    assert status["GITHUB_TOKEN"] is True
    assert status["TAVILY_API_KEY"] is False and status["OPENAI_API_KEY"] is False
    assert all(isinstance(value, bool) for value in status.values())
    assert "ghp_value" not in repr(status)


def test_an_empty_source_key_counts_as_unset(tmp_path: Path) -> None:
    # The sources treat an empty key as none: the status says what they will do.
    settings = make_settings(tmp_path, tavily_api_key=SecretStr(""))
    assert key_status(settings)["TAVILY_API_KEY"] is False
