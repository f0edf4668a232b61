"""OAuth access tokens, in process: the key set's cache, keys it must never use, and the
settings an issuer needs (over a real server with an identity provider:
`tests/e2e/api/test_oauth.py`)."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.requests import Request

from codeweaver.api.auth import ExposedWithoutTokenError, TokenFileError, TokenTable, check_binding
from codeweaver.api.oauth import JwtVerifier, KeySet, OAuthConfig, Verdict, discovery_urls
from codeweaver.config import Settings

AUDIENCE = "https://cw.example/mcp"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwk(key: Any, kid: str, alg: str) -> dict[str, Any]:
    algorithm = jwt.algorithms.RSAAlgorithm if alg == "RS256" else jwt.algorithms.ECAlgorithm
    jwk: dict[str, Any] = algorithm.to_jwk(key.public_key(), as_dict=True)
    return {**jwk, "kid": kid, "alg": alg, "use": "sig"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class CountingFetch:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.urls: list[str] = []

    async def __call__(self, url: str) -> Any:
        self.urls.append(url)
        return self.document


async def test_keys_are_cached_and_an_unknown_kid_refetches_at_most_once_a_minute() -> None:
    config = OAuthConfig(
        issuer="https://id.example", audience=AUDIENCE, jwks_url="https://id.example/k"
    )
    fetch = CountingFetch({"keys": [_jwk(RSA_KEY, "rsa1", "RS256")]})
    now = [1000.0]
    keys = KeySet(config, fetch, refresh_seconds=60, clock=lambda: now[0])
    assert await keys.key("rsa1") is not None
    assert await keys.key("rsa1") is not None
    assert await keys.key("nobody") is None  # just fetched: no new fetch
    assert len(fetch.urls) == 1
    now[0] += 61
    assert await keys.key("nobody") is None
    assert await keys.key("nobody") is None
    assert fetch.urls == ["https://id.example/k", "https://id.example/k"]


async def test_an_hs256_key_in_the_jwks_is_never_used() -> None:
    config = OAuthConfig(
        issuer="https://id.example", audience=AUDIENCE, jwks_url="https://id.example/k"
    )
    secret = {"kty": "oct", "kid": "hmac", "k": _b64(b"s" * 32), "alg": "HS256"}
    keys = KeySet(config, CountingFetch({"keys": [secret]}))
    assert await keys.key("hmac") is None
    claims = {"iss": config.issuer, "aud": AUDIENCE, "sub": "eve", "exp": int(time.time()) + 60}
    token = jwt.encode(claims, b"s" * 32, "HS256", headers={"kid": "hmac"})
    assert await JwtVerifier(config, keys).verify(token) == Verdict(error="invalid_token")


def test_the_issuer_needs_an_audience_and_https(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="CODEWEAVER_OAUTH_AUDIENCE"):
        TokenTable.from_settings(Settings(data_dir=tmp_path, oauth_issuer="https://id.example"))
    with pytest.raises(TokenFileError, match="https"):
        TokenTable.from_settings(
            Settings(data_dir=tmp_path, oauth_issuer="http://id.example", oauth_audience="x")
        )
    resource = Settings(
        data_dir=tmp_path,
        oauth_issuer="https://id.example/tenant",
        oauth_resource="https://cw.example/mcp",
        oauth_scopes="a, b",
    )
    tokens = TokenTable.from_settings(resource)
    assert tokens.required and tokens.oauth is not None
    assert tokens.oauth.audience == "https://cw.example/mcp" and tokens.oauth.scopes == ("a", "b")
    request = Request({"type": "http", "headers": [], "method": "GET", "path": "/"})
    assert tokens.oauth.metadata_url(request) == (
        "https://cw.example/.well-known/oauth-protected-resource/mcp"
    )
    assert discovery_urls("https://id.example/tenant") == [
        "https://id.example/.well-known/oauth-authorization-server/tenant",
        "https://id.example/tenant/.well-known/openid-configuration",
    ]
    check_binding("0.0.0.0", tokens)  # signed tokens: exposing without static ones is fine
    with pytest.raises(ExposedWithoutTokenError):
        check_binding("0.0.0.0", TokenTable.from_settings(Settings(data_dir=tmp_path)))
