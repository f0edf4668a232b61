"""The HTTP service's settings (`codeweaver serve`: the API and /mcp), part of `Settings`."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "CODEWEAVER_"


class ServiceSettings(BaseSettings):
    """Who may call the service, from where, and how much; read through `Settings`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    api_token: SecretStr | None = Field(
        default=None,
        description="Bearer token the API requires; mandatory off loopback.",
    )
    api_tokens: Path | None = Field(
        default=None,
        description="A file of `user token` lines: one bearer token per user.",
    )
    allowed_hosts: str = Field(
        default="",
        description="Comma-separated host names the server answers for, besides loopback "
        "and the bound address (`*.example.com` allowed).",
    )
    oauth_issuer: str | None = Field(
        default=None,
        description="Issuer URL of an OAuth 2.1 authorization server whose JWT access "
        "tokens are accepted beside the static tokens; unset: OAuth off.",
    )
    oauth_resource: str | None = Field(
        default=None,
        description="Public URL of /mcp (e.g. `https://cw.example.com/mcp`), named in the "
        "protected resource metadata; default: derived from each request.",
    )
    oauth_audience: str | None = Field(
        default=None,
        description="The `aud` tokens must carry; default: CODEWEAVER_OAUTH_RESOURCE "
        "(one of the two is required with the issuer).",
    )
    oauth_jwks_url: str | None = Field(
        default=None,
        description="The issuer's signing keys (JWKS); default: its metadata's `jwks_uri`.",
    )
    oauth_scopes: str = Field(
        default="",
        description="Scopes every access token must hold, comma- or space-separated.",
    )
    trusted_proxies: str = Field(
        default="",
        description="Comma-separated proxy addresses or networks whose X-Forwarded-For "
        "is believed.",
    )
    redis_url: SecretStr | None = Field(
        default=None,
        description="Redis shared by several server processes: one rate-limit budget and "
        "one set of run slots.",
    )
    cors_origins: str = Field(
        default="",
        description="Comma-separated origins allowed to call the API from a browser.",
    )
    api_max_body: int = Field(
        default=65536,
        ge=1024,
        description="Largest request body, in bytes.",
    )
    api_rate_per_minute: int = Field(
        default=30,
        ge=1,
        # Read as CODEWEAVER_API_RATE; the field keeps its longer name, used all over.
        validation_alias=AliasChoices("CODEWEAVER_API_RATE"),
        description="Chat requests per client per minute.",
    )
    api_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Answers computed at once (default: 1 for a local model, 8 otherwise).",
    )
    api_queue: int = Field(
        default=8,
        ge=0,
        description="Answers that may wait for a slot before the API answers 503.",
    )
    mcp_sessions: int = Field(
        default=16,
        ge=1,
        description="MCP requests one user (one client address without tokens) may have "
        "in flight at /mcp at once, on each replica: a running tool call and an open "
        "`subscriptions/listen` stream hold one each until they end or the client hangs "
        "up; a request beyond them gets 429. (/mcp keeps no sessions; the name is kept so "
        "configurations stay valid.)",
    )
    mcp_idle: float = Field(
        default=300.0,
        gt=0,
        description="No effect: /mcp serves each request on its own and keeps no sessions "
        "to close (replicas behind round robin need that); a request's place is freed when "
        "it ends. Still accepted, so configurations that set it keep loading.",
    )

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip() for o in self.cors_origins.split(",") if o.strip()]

    @property
    def allowed_host_list(self) -> list[str]:
        return [h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip()]

    @property
    def trusted_proxy_list(self) -> list[str]:
        return [p.strip() for p in self.trusted_proxies.split(",") if p.strip()]
