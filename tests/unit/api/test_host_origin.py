"""Which Host names a server answers for, and which origins may change state."""

from __future__ import annotations

import pytest

from codeweaver.api.security import _host_matches, _hostname, allowed_hosts, content_policy


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8000", "localhost"),
        ("LOCALHOST", "localhost"),
        ("example.com.:443", "example.com"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("", ""),
        ("[broken", ""),
    ],
)
def test_host_names_are_read_without_port_case_or_trailing_dot(header: str, name: str) -> None:
    assert _hostname(header) == name


def test_a_loopback_bind_answers_for_loopback_names_only() -> None:
    hosts = allowed_hosts("127.0.0.1", [])
    assert hosts is not None
    for name in ("localhost", "127.0.0.1", "::1"):
        assert _host_matches(name, hosts)
    for name in ("attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io", ""):
        assert not _host_matches(name, hosts)


def test_configured_names_and_wildcards_are_added() -> None:
    hosts = allowed_hosts("10.0.0.5", ["cw.example.com", "*.corp.example"])
    assert hosts is not None
    assert _host_matches("10.0.0.5", hosts)
    assert _host_matches("cw.example.com", hosts)
    assert _host_matches("team.corp.example", hosts)
    assert not _host_matches("corp.example", hosts)
    assert not _host_matches("evilcorp.example", hosts)


def test_a_wildcard_bind_answers_for_any_name_unless_names_are_configured() -> None:
    assert allowed_hosts("0.0.0.0", []) is None
    assert allowed_hosts("::", []) is None
    restricted = allowed_hosts("0.0.0.0", ["cw.example.com"])
    assert restricted is not None and not _host_matches("attacker.example", restricted)


def test_data_may_run_nothing_and_nothing_may_be_framed() -> None:
    for path in ("/api/health", "/static/app.js", "/openapi.json"):
        assert content_policy(path).startswith("default-src 'none'")
    for path in ("/docs", "/gradio/", "/api/chat"):
        assert "frame-ancestors 'none'" in content_policy(path)
