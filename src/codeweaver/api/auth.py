"""Who is asking: bearer tokens mapped to users, and the rule for exposing the server.

With no token configured the server is one person's loopback tool and every request is
the `default` user. `CODEWEAVER_API_TOKEN` is one token for the `default` user;
`CODEWEAVER_API_TOKENS` names a file of `user token` lines, one per user. Sessions belong
to the user who created them. With `CODEWEAVER_OAUTH_ISSUER` set, an identity provider's
access tokens are accepted beside them, their `sub` the user (`oauth.py`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import HTTPException, Request, status

from codeweaver.api.oauth import OAuthConfig, OAuthSettingError, bearer_token, verdict_of

if TYPE_CHECKING:
    from codeweaver.config import Settings

DEFAULT_USER = "default"
MIN_EXPOSED_TOKEN_CHARS = 16
USER_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


class ExposedWithoutTokenError(ValueError):
    """Binding off loopback needs strong enough tokens."""


class TokenFileError(ValueError):
    """The tokens file (or the OAuth settings) cannot be used; the text says where and why."""


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class TokenTable:
    """Tokens and the users they stand for, and the identity provider whose access tokens
    are accepted too; neither means no authentication."""

    users: Mapping[bytes, str]  # sha256(token) -> user name
    shortest: int = 0
    oauth: OAuthConfig | None = None

    @property
    def required(self) -> bool:
        return bool(self.users) or self.oauth is not None

    @classmethod
    def from_pairs(cls, pairs: Mapping[str, str]) -> TokenTable:
        """From `{token: user}`."""
        shortest = min((len(t) for t in pairs), default=0)
        return cls({_digest(token): user for token, user in pairs.items()}, shortest)

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenTable:
        pairs: dict[str, str] = {}
        if settings.api_token is not None:
            token = settings.api_token.get_secret_value().strip()
            if token:  # a blank token is no token: nobody could send it
                pairs[token] = DEFAULT_USER
        if settings.api_tokens is not None:
            for token, user in read_token_file(settings.api_tokens).items():
                if token in pairs:
                    raise TokenFileError(
                        f"{settings.api_tokens}: user {user!r} has the same token as "
                        "CODEWEAVER_API_TOKEN"
                    )
                pairs[token] = user
        try:
            oauth = OAuthConfig.from_settings(settings)
        except OAuthSettingError as exc:
            # Reported like a bad tokens file: one line, at start, before listening.
            raise TokenFileError(str(exc)) from None
        table = cls.from_pairs(pairs)
        return cls(table.users, table.shortest, oauth)

    def is_static(self, token: str) -> bool:
        return self.user_for(token) is not None

    def user_for(self, token: str) -> str | None:
        """The user whose token this is, compared in constant time."""
        given = _digest(token)
        found = None
        for digest, user in self.users.items():
            if hmac.compare_digest(given, digest):
                found = user
        return found

    def authenticate(self, request: Request) -> str:
        """The request's user, or 401 when a token is required and not right."""
        if not self.required:
            return DEFAULT_USER
        given = bearer_token(request)
        user = self.user_for(given) if given else None
        if user is not None:
            return user
        if self.oauth is not None:
            # `OAuthMiddleware` has checked a JWT already; no verdict means none was sent.
            verdict = verdict_of(request)
            if verdict is not None and verdict.user is not None:
                return verdict.user
            raise self.oauth.refusal(request, verdict)
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or wrong bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )


def read_token_file(path: Path) -> dict[str, str]:
    """`{token: user}` from lines `user token`; `#` starts a comment."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"cannot read the tokens file {path}: {exc}") from None
    pairs: dict[str, str] = {}
    users: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise TokenFileError(f"{path}:{number}: expected `user token`, got {len(fields)} words")
        user, token = fields
        if not USER_NAME.match(user):
            raise TokenFileError(
                f"{path}:{number}: a user name is 1-64 letters, digits, '_', '.', '@' or '-'"
            )
        if user in users:
            raise TokenFileError(f"{path}:{number}: user {user!r} is listed twice")
        if token in pairs:
            raise TokenFileError(f"{path}:{number}: this token is already used by {pairs[token]!r}")
        users.add(user)
        pairs[token] = user
    if not pairs:
        raise TokenFileError(f"the tokens file {path} lists no `user token` line")
    return pairs


def check_binding(host: str, tokens: TokenTable) -> None:
    """Refuse to listen off loopback without tokens, or with guessable ones."""
    if is_loopback(host):
        return
    if tokens.oauth is not None and not tokens.users:
        return  # the identity provider's signed tokens cannot be guessed
    if not tokens.required:
        raise ExposedWithoutTokenError(
            f"refusing to listen on {host} without CODEWEAVER_API_TOKEN (or "
            "CODEWEAVER_API_TOKENS): anyone who can reach it could use your model and read "
            "your sessions. Set a token (clients send `Authorization: Bearer <token>`) or "
            "bind to 127.0.0.1."
        )
    if tokens.shortest < MIN_EXPOSED_TOKEN_CHARS:
        raise ExposedWithoutTokenError(
            f"refusing to listen on {host}: a token of {tokens.shortest} characters can be "
            f"guessed; use at least {MIN_EXPOSED_TOKEN_CHARS} "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
