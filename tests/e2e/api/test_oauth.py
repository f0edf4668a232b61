"""OAuth access tokens at /mcp and /api: a real server, an identity provider's keys served
from a local HTTP endpoint, tokens minted here (the key set in process:
`tests/unit/api/test_oauth.py`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.mcp_server.http import McpExtension
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app
from tests.unit.api.test_oauth import AUDIENCE, RSA_KEY, _b64, _jwk
from tests.unit.mcp_server.helpers import SCRIPT

SCOPE = "codeweaver"
STATIC = "static-token-0123456789"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}

EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


class IdentityProvider:
    """RFC 8414 metadata and a JWKS, over HTTP on loopback; counts key fetches."""

    def __init__(self) -> None:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                documents = {
                    "/.well-known/oauth-authorization-server": {
                        "issuer": provider.issuer,
                        "jwks_uri": f"{provider.issuer}/jwks",
                    },
                    "/jwks": {
                        "keys": [_jwk(RSA_KEY, "rsa1", "RS256"), _jwk(EC_KEY, "ec1", "ES256")]
                    },
                }
                if self.path == "/jwks":
                    provider.key_fetches += 1
                body = json.dumps(documents[self.path]).encode() if self.path in documents else b""
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.key_fetches = 0

    def mint(self, key: Any = RSA_KEY, alg: str = "RS256", kid: str = "rsa1", **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": "alice",
            "iat": now,
            "exp": now + 300,
            "scope": f"openid {SCOPE}",
            **claims,
        }
        return jwt.encode(
            {k: v for k, v in payload.items() if v is not None}, key, alg, headers={"kid": kid}
        )


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    provider = IdentityProvider()
    thread = threading.Thread(target=provider.server.serve_forever, daemon=True)
    thread.start()
    yield provider
    provider.server.shutdown()
    provider.server.server_close()


@contextmanager
def serve(tmp_path: Path, **settings: Any) -> Iterator[str]:
    deps, _ = make_deps(tmp_path, SCRIPT, sources=[FakeSource(results=[doc(1), doc(2)])])
    deps.settings = deps.settings.model_copy(update={"api_rate_per_minute": 1000, **settings})
    app = create_app(deps.settings, deps=deps, extensions=[McpExtension()])
    with running_app(app) as url:
        yield url


@pytest.fixture(scope="module")
def url(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(
        tmp_path_factory.mktemp("oauth"),
        api_token=SecretStr(STATIC),
        oauth_issuer=idp.issuer,
        oauth_audience=AUDIENCE,
        oauth_scopes=SCOPE,
    ) as base:
        yield base


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def forged(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """A token PyJWT would refuse to make: unsigned, or HMAC'd with a public key."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    mac = (
        b"" if secret is None else hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    )
    return f"{signing_input}.{_b64(mac)}"


def test_a_valid_token_initializes_mcp_and_calls_the_api_as_its_subject(
    url: str, idp: IdentityProvider
) -> None:
    alice = bearer(idp.mint())
    init = httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **alice})
    assert init.status_code == 200, init.text
    assert "serverInfo" in init.text
    # A session created by alice is hers: listed for her, not for bob nor the static user.
    chat = httpx.post(f"{url}/api/chat", json={"message": "How do I read a file?"}, headers=alice)
    assert chat.status_code == 200, chat.text
    session = chat.json()["session_id"]
    mine = httpx.get(f"{url}/api/sessions", headers=alice).json()
    assert [s["id"] for s in mine] == [session]
    bob = bearer(idp.mint(kid="ec1", key=EC_KEY, alg="ES256", sub="bob"))
    assert httpx.get(f"{url}/api/sessions", headers=bob).json() == []
    assert httpx.get(f"{url}/api/sessions", headers=bearer(STATIC)).json() == []
    assert httpx.get(f"{url}/api/sessions/{session}", headers=bob).status_code == 404


def test_the_static_token_still_works_beside_oauth(url: str) -> None:
    assert httpx.get(f"{url}/api/sessions", headers=bearer(STATIC)).status_code == 200
    init = httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(STATIC)})
    assert init.status_code == 200


def test_a_subject_named_like_a_static_user_is_not_that_user(
    url: str, idp: IdentityProvider
) -> None:
    from codeweaver.memory.sessions import DEFAULT_OWNER

    chat = httpx.post(f"{url}/api/chat", json={"message": "How?"}, headers=bearer(STATIC))
    assert chat.status_code == 200, chat.text
    namesake = bearer(idp.mint(sub=DEFAULT_OWNER))
    assert httpx.get(f"{url}/api/sessions", headers=namesake).json() == []
    assert len(httpx.get(f"{url}/api/sessions", headers=bearer(STATIC)).json()) == 1


def _refused(idp: IdentityProvider) -> dict[str, str]:
    now = int(time.time())
    claims = {"iss": idp.issuer, "aud": AUDIENCE, "sub": "alice", "exp": now + 300, "scope": SCOPE}
    public_pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "expired": idp.mint(exp=now - 120, iat=now - 600),
        "not yet valid": idp.mint(nbf=now + 600),
        "wrong audience": idp.mint(aud="https://other.example/mcp"),
        "wrong issuer": idp.mint(iss="https://evil.example"),
        "unknown kid": idp.mint(kid="nobody"),
        "unknown key under a known kid": idp.mint(key=OTHER_KEY),
        "no exp": idp.mint(exp=None),
        "alg none": forged({"alg": "none", "kid": "rsa1"}, claims, None),
        "HS256 with the public key": forged({"alg": "HS256", "kid": "rsa1"}, claims, public_pem),
        "RS256 header on the EC key": idp.mint(kid="ec1"),
        "not a JWT": "not-a-jwt-nor-a-static-token",
    }


@pytest.mark.parametrize("path", ["/mcp", "/api/sessions", "/v1/models"])
def test_bad_tokens_get_401_invalid_token_with_the_metadata_url(
    url: str, idp: IdentityProvider, path: str
) -> None:
    metadata = f'resource_metadata="{url}/.well-known/oauth-protected-resource/mcp"'
    for why, token in _refused(idp).items():
        response = (
            httpx.post(f"{url}{path}", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)})
            if path == "/mcp"
            else httpx.get(f"{url}{path}", headers=bearer(token))
        )
        assert response.status_code == 401, why
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and metadata in challenge, why
        assert 'error="invalid_token"' in challenge, why
        assert token not in response.text  # nothing of the token echoed back


def test_no_token_gets_401_pointing_at_the_metadata_without_an_error(url: str) -> None:
    response = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{url}/.well-known/oauth-protected-resource/mcp"'
    )


@pytest.mark.parametrize("path", ["/mcp", "/api/sessions"])
def test_a_token_without_the_scope_gets_403_insufficient_scope(
    url: str, idp: IdentityProvider, path: str
) -> None:
    token = idp.mint(scope="openid profile")
    if path == "/mcp":
        response = httpx.post(
            f"{url}{path}", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)}
        )
    else:
        response = httpx.get(f"{url}{path}", headers=bearer(token))
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and f'scope="{SCOPE}"' in challenge
    assert "resource_metadata=" in challenge
    # The list form some providers send counts too.
    listed = idp.mint(scope=None, scp=[SCOPE])
    assert httpx.get(f"{url}/api/sessions", headers=bearer(listed)).status_code == 200


@pytest.mark.parametrize("suffix", ["", "/mcp"])
def test_the_protected_resource_metadata(url: str, idp: IdentityProvider, suffix: str) -> None:
    response = httpx.get(f"{url}/.well-known/oauth-protected-resource{suffix}")
    assert response.status_code == 200
    assert response.json() == {
        "resource": f"{url}/mcp",
        "authorization_servers": [idp.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [SCOPE],
    }


def test_without_an_issuer_nothing_changes(tmp_path: Path) -> None:
    with serve(tmp_path, api_token=SecretStr(STATIC)) as url:
        assert httpx.get(f"{url}/.well-known/oauth-protected-resource").status_code == 404
        assert httpx.get(f"{url}/.well-known/oauth-protected-resource/mcp").status_code == 404
        assert httpx.get(f"{url}/api/sessions", headers=bearer(STATIC)).status_code == 200
        wrong = httpx.get(f"{url}/api/sessions", headers=bearer("wrong"))
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"


def test_the_keys_are_fetched_once_for_many_requests(url: str, idp: IdentityProvider) -> None:
    before = idp.key_fetches
    for _ in range(3):
        token = idp.mint()
        assert httpx.get(f"{url}/api/sessions", headers=bearer(token)).status_code == 200
    assert idp.key_fetches == before
