"""Tokens, users and the rule for exposing the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import HTTPException
from pydantic import SecretStr
from starlette.requests import Request

from codeweaver.api.auth import (
    DEFAULT_USER,
    ExposedWithoutTokenError,
    TokenFileError,
    TokenTable,
    check_binding,
    read_token_file,
)
from codeweaver.config import Settings


def request(authorization: str | None) -> Request:
    headers = [] if authorization is None else [(b"authorization", authorization.encode())]
    return Request({"type": "http", "headers": headers, "method": "GET", "path": "/"})


def test_a_token_file_maps_each_token_to_its_user(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team\nalice  alice-secret-token-1  # laptop\n\nbob bob-secret-token-22\n")
    assert read_token_file(path) == {"alice-secret-token-1": "alice", "bob-secret-token-22": "bob"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("alice\n", ":1: expected `user token`, got 1 words"),
        ("alice a b\n", ":1: expected `user token`, got 3 words"),
        ("al/ice tok\n", ":1: a user name is"),
        ("alice t1\nalice t2\n", ":2: user 'alice' is listed twice"),
        ("alice t1\nbob t1\n", ":2: this token is already used by 'alice'"),
        ("# nobody\n", "lists no `user token` line"),
    ],
)
def test_a_bad_token_file_says_where_and_why(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "tokens"
    path.write_text(text)
    with pytest.raises(TokenFileError) as raised:
        read_token_file(path)
    assert problem in str(raised.value)


def test_a_missing_token_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot read the tokens file"):
        read_token_file(tmp_path / "absent")


def test_settings_give_one_default_user_and_the_file_users(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice alice-secret-token-1\n")
    settings = Settings(data_dir=tmp_path, api_token=SecretStr(" main-token "), api_tokens=path)
    tokens = TokenTable.from_settings(settings)
    assert tokens.user_for("main-token") == DEFAULT_USER  # surrounding blanks dropped
    assert tokens.user_for("alice-secret-token-1") == "alice"
    assert tokens.user_for("alice-secret-token") is None
    blank = Settings(data_dir=tmp_path, api_token=SecretStr("  "))
    assert not TokenTable.from_settings(blank).required
    assert not TokenTable.from_settings(Settings(data_dir=tmp_path)).required


def test_the_same_token_for_two_users_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice shared-token-123456\n")
    settings = Settings(
        data_dir=tmp_path, api_token=SecretStr("shared-token-123456"), api_tokens=path
    )
    with pytest.raises(TokenFileError, match="same token"):
        TokenTable.from_settings(settings)


def test_authenticate_accepts_any_case_of_bearer_and_nothing_else() -> None:
    tokens = TokenTable.from_pairs({"alice-secret-token-1": "alice"})
    for scheme in ("Bearer", "bearer", "BEARER"):
        assert tokens.authenticate(request(f"{scheme} alice-secret-token-1")) == "alice"
    for header in (
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic alice-secret-token-1",
        "alice-secret-token-1",
        "Bearer  alice-secret-token-1",
        "Bearer alice-secret-token-",
        "Bearer alice-secret-token-1x",
    ):
        with pytest.raises(HTTPException) as raised:
            tokens.authenticate(request(header))
        assert raised.value.status_code == 401
        assert raised.value.headers == {"WWW-Authenticate": "Bearer"}


def test_without_tokens_everyone_is_the_default_user() -> None:
    assert TokenTable.from_pairs({}).authenticate(request("Bearer anything")) == DEFAULT_USER


def test_an_exposed_bind_needs_every_token_long_enough() -> None:
    weak = TokenTable.from_pairs({"x" * 16: "alice", "y" * 15: "bob"})
    with pytest.raises(ExposedWithoutTokenError, match="15 characters"):
        check_binding("0.0.0.0", weak)
    with pytest.raises(ExposedWithoutTokenError, match="without CODEWEAVER_API_TOKEN"):
        check_binding("::", TokenTable.from_pairs({}))
    check_binding("::1", weak)
    check_binding("localhost", TokenTable.from_pairs({}))
    check_binding("192.168.1.5", TokenTable.from_pairs({"z" * 16: "alice"}))
