"""OAuth 2.1 resource server: JWT access tokens from one identity provider, beside the
static tokens of `auth.py`.

On when `CODEWEAVER_OAUTH_ISSUER` is set. A bearer token that is no static token is
checked here: signed by a key of the issuer's JWKS with an allowed algorithm, issued by
that issuer, for this server's audience, current, with the required scopes. Its `sub`
becomes the user, so sessions and per-user limits work as with static tokens.

Checking needs the issuer's keys, fetched over the network, while `TokenTable.authenticate`
(called by every route and by /mcp) is synchronous. So `OAuthMiddleware` verifies the
token first, asynchronously, and leaves its verdict in the ASGI scope, where
`authenticate` reads it; nothing is verified twice and no caller changes.

The SDK's `mcp.server.auth` is not reused: its `RequireAuthMiddleware` wants Starlette's
authentication middleware and guards one route, while here one `authenticate` guards
/mcp, /api and /v1 alike; and its metadata model normalises URLs (a trailing `/` added to
an issuer), which clients compare character by character.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import httpx
import jwt
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

from codeweaver.api.security import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

# Asymmetric only: a server holding just public keys must never accept HS* (anyone with
# the public key could sign) nor an unsigned `none` token.
ALLOWED_ALGORITHMS = frozenset({"RS256", "ES256", "EdDSA"})
LEEWAY_SECONDS = 30  # clock skew between the identity provider and this server
# A token naming an unknown key may mean the provider rotated its keys, or that someone
# sends made-up ones: refetch, but at most this often.
REFRESH_SECONDS = 60.0
FETCH_TIMEOUT = 5.0
MAX_DOCUMENT_BYTES = 256 * 1024
METADATA_PATH = "/.well-known/oauth-protected-resource"
SCOPE_KEY = "codeweaver.oauth"  # where the middleware leaves its `Verdict`
_PRINTABLE = re.compile(r"^[\x21-\x7e][\x20-\x7e]{0,254}$")

Fetch = Callable[[str], Awaitable[Any]]
ErrorCode = Literal["invalid_token", "insufficient_scope"]


class OAuthSettingError(ValueError):
    """The OAuth settings cannot work; the text says which and why."""


class KeysUnavailableError(RuntimeError):
    """The issuer's keys could not be fetched."""


def _https_or_loopback(name: str, url: str) -> str:
    parts = urlsplit(url)
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise OAuthSettingError(f"{name} must be an https:// URL (http only on loopback)")
    return url


@dataclass(frozen=True)
class OAuthConfig:
    """What a token must show; built from the `oauth_*` settings."""

    issuer: str
    audience: str
    resource: str | None = None  # the public URL of /mcp; else taken from each request
    jwks_url: str | None = None  # else discovered from the issuer's metadata
    scopes: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> OAuthConfig | None:
        issuer = (settings.oauth_issuer or "").strip()
        if not issuer:
            return None
        resource = (settings.oauth_resource or "").strip() or None
        audience = (settings.oauth_audience or "").strip() or resource
        if audience is None:
            raise OAuthSettingError(
                "CODEWEAVER_OAUTH_ISSUER needs CODEWEAVER_OAUTH_AUDIENCE (or "
                "CODEWEAVER_OAUTH_RESOURCE, the public URL of /mcp): the value tokens "
                "must carry in `aud`, so tokens issued for other services are refused"
            )
        jwks = (settings.oauth_jwks_url or "").strip() or None
        return cls(
            issuer=_https_or_loopback("CODEWEAVER_OAUTH_ISSUER", issuer),
            audience=audience,
            resource=resource and _https_or_loopback("CODEWEAVER_OAUTH_RESOURCE", resource),
            jwks_url=jwks and _https_or_loopback("CODEWEAVER_OAUTH_JWKS_URL", jwks),
            scopes=tuple(settings.oauth_scopes.replace(",", " ").split()),
        )

    def resource_for(self, request: Request) -> str:
        return self.resource or str(request.base_url).rstrip("/") + "/mcp"

    def metadata_url(self, request: Request) -> str:
        """RFC 9728 §3.1: the well-known path goes between the host and the resource's path."""
        parts = urlsplit(self.resource_for(request))
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"

    def challenge(self, request: Request, error: ErrorCode | None) -> str:
        """The `WWW-Authenticate` value of a refusal (RFC 6750 §3, MCP authorization)."""
        fields = [f'resource_metadata="{self.metadata_url(request)}"']
        if error is not None:
            fields.append(f'error="{error}"')
        if error == "insufficient_scope" and self.scopes:
            fields.append(f'scope="{" ".join(self.scopes)}"')
        return "Bearer " + ", ".join(fields)

    def refusal(self, request: Request, verdict: Verdict | None) -> HTTPException:
        """401 (no or a bad token) or 403 (a good token without the scopes)."""
        if verdict is not None and verdict.error == "insufficient_scope":
            return HTTPException(
                403,
                "the access token lacks a required scope",
                headers={"WWW-Authenticate": self.challenge(request, "insufficient_scope")},
            )
        sent = bearer_token(request) is not None
        challenge = self.challenge(request, "invalid_token" if sent else None)
        return HTTPException(
            401,
            "invalid or expired access token" if sent else "missing bearer token",
            headers={"WWW-Authenticate": challenge},
        )


@dataclass(frozen=True)
class Verdict:
    """What the middleware found out about a request's JWT."""

    user: str | None = None  # set only when the token is fully valid
    error: ErrorCode | None = None


async def fetch_json(url: str) -> Any:
    """A small JSON document over HTTPS, redirects not followed (keys come from where
    they were configured or advertised, nowhere else)."""
    async with httpx.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=False) as client:
        response = await client.get(url, headers={"Accept": "application/json"})
    if response.status_code != 200:
        raise KeysUnavailableError(f"{url} answered {response.status_code}")
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise KeysUnavailableError(f"{url} sent more than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return json.loads(response.content)
    except ValueError:
        raise KeysUnavailableError(f"{url} sent no JSON") from None


def discovery_urls(issuer: str) -> list[str]:
    """RFC 8414 §3.1 (well-known inserted before the issuer's path), then OpenID
    Connect Discovery (appended to it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


class KeySet:
    """The issuer's signing keys by `kid`, fetched once and again for an unknown `kid`,
    at most every `refresh_seconds`."""

    def __init__(
        self,
        config: OAuthConfig,
        fetch: Fetch = fetch_json,
        refresh_seconds: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.fetch = fetch
        self.refresh_seconds = refresh_seconds
        self.clock = clock
        self.keys: dict[str | None, jwt.PyJWK] = {}
        self.fetches = 0
        self._jwks_url = config.jwks_url
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> jwt.PyJWK | None:
        found = self._lookup(kid)
        if found is not None:
            return found
        async with self._lock:  # concurrent requests with a new `kid` fetch once
            found = self._lookup(kid)
            last = self._fetched_at
            if found is None and (last is None or self.clock() - last >= self.refresh_seconds):
                self._fetched_at = self.clock()
                self.fetches += 1
                self.keys = await self._load()
                found = self._lookup(kid)
        return found

    def _lookup(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None and len(self.keys) == 1:
            return next(iter(self.keys.values()))  # a provider with one key may omit `kid`
        return self.keys.get(kid) if kid is not None else None

    async def _load(self) -> dict[str | None, jwt.PyJWK]:
        if self._jwks_url is None:
            self._jwks_url = await self._discover()
        document = await self.fetch(self._jwks_url)
        entries = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(entries, list):
            raise KeysUnavailableError(f"{self._jwks_url} holds no `keys` list")
        keys: dict[str | None, jwt.PyJWK] = {}
        for entry in entries:
            if not isinstance(entry, Mapping) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(dict(entry))
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue  # a key type or curve we do not use; the others still count
            if key.algorithm_name in ALLOWED_ALGORITHMS:
                keys[entry.get("kid")] = key
        return keys

    async def _discover(self) -> str:
        for url in discovery_urls(self.config.issuer):
            try:
                metadata = await self.fetch(url)
            except (KeysUnavailableError, httpx.HTTPError):
                continue
            if not isinstance(metadata, Mapping) or not isinstance(metadata.get("jwks_uri"), str):
                continue
            # RFC 8414 §3.3: metadata naming another issuer must not be used.
            if metadata.get("issuer") != self.config.issuer:
                raise KeysUnavailableError(f"{url} is the metadata of another issuer")
            return _https_or_loopback("jwks_uri", metadata["jwks_uri"])
        raise KeysUnavailableError(
            f"no jwks_uri in the metadata of {self.config.issuer}; set CODEWEAVER_OAUTH_JWKS_URL"
        )


def _scopes(claims: Mapping[str, Any]) -> set[str]:
    """`scope` (RFC 9068, space-separated) or `scp` (a list, as some providers send)."""
    scope, scp = claims.get("scope"), claims.get("scp")
    found = set(scope.split()) if isinstance(scope, str) else set()
    if isinstance(scp, list):
        found |= {s for s in scp if isinstance(s, str)}
    elif isinstance(scp, str):
        found |= set(scp.split())
    return found


class JwtVerifier:
    """Checks an access token against `config`, with keys from `keys`."""

    def __init__(self, config: OAuthConfig, keys: KeySet | None = None) -> None:
        self.config = config
        self.keys = keys or KeySet(config)

    async def verify(self, token: str) -> Verdict:
        invalid = Verdict(error="invalid_token")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return invalid
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in ALLOWED_ALGORITHMS or not isinstance(kid, str | None):
            return invalid
        try:
            key = await self.keys.key(kid)
        except (KeysUnavailableError, httpx.HTTPError) as exc:
            # The reason names only public URLs; never the token.
            logger.warning("OAuth signing keys unavailable: %s", exc)
            return invalid
        # The key decides the algorithm, not the token: an RSA key verifies RS256 only.
        if key is None or key.algorithm_name != algorithm:
            return invalid
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.config.audience,
                issuer=self.config.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            logger.info("refused an access token: %s", type(exc).__name__)
            return invalid
        subject = claims.get("sub")
        if not isinstance(subject, str) or not _PRINTABLE.match(subject):
            return invalid
        if not set(self.config.scopes) <= _scopes(claims):
            return Verdict(error="insufficient_scope")
        # Prefixed: an identity provider's `sub` must never name a static-token user
        # (`default`, a name from the tokens file) and so own that user's sessions.
        return Verdict(user=f"oauth:{subject}")


class OAuthMiddleware:
    """Verifies a bearer token that is no static token and leaves the `Verdict` in the
    scope under `SCOPE_KEY` for `TokenTable.authenticate`; never answers by itself."""

    def __init__(
        self, app: ASGIApp, verifier: JwtVerifier, is_static: Callable[[str], bool]
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.is_static = is_static

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            token = bearer_token(Request(scope))
            if token is not None and not self.is_static(token):
                scope[SCOPE_KEY] = await self.verifier.verify(token)
        await self.app(scope, receive, send)


def bearer_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer <token>`, exactly as sent (one space)."""
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return given or None if scheme.lower() == "bearer" else None


def verdict_of(request: Request) -> Verdict | None:
    found = request.scope.get(SCOPE_KEY)
    return found if isinstance(found, Verdict) else None


def install_oauth(
    app: FastAPI, config: OAuthConfig | None, is_static: Callable[[str], bool]
) -> None:
    """With `config`, the verifying middleware and the RFC 9728 metadata document, at
    the root and path-suffixed by the resource's path (`…/oauth-protected-resource/mcp`)."""
    if config is None:
        return
    app.add_middleware(OAuthMiddleware, verifier=JwtVerifier(config), is_static=is_static)

    async def metadata(request: Request) -> JSONResponse:
        document: dict[str, Any] = {
            "resource": config.resource_for(request),
            "authorization_servers": [config.issuer],
            "bearer_methods_supported": ["header"],
        }
        if config.scopes:
            document["scopes_supported"] = list(config.scopes)
        return JSONResponse(document, headers={"Cache-Control": "max-age=3600"})

    suffix = urlsplit(config.resource).path.rstrip("/") if config.resource else "/mcp"
    paths = dict.fromkeys([METADATA_PATH, METADATA_PATH + (suffix or "")])
    for path in paths:
        app.router.routes.append(Route(path, metadata, methods=["GET"], include_in_schema=False))
