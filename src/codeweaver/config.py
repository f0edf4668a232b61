"""One typed settings object. Precedence: explicit argument > environment > `.env` > default."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

APP_NAME = "codeweaver"
DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"


class Settings(BaseSettings):
    """Every knob CodeWeaver reads. All optional; keys and servers only add power."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    def __init__(self, **values: Any) -> None:
        # Fields are set in code by their own names (`Settings(model=…)`), but read from
        # the environment only under their documented names: a bare `MODEL` or
        # `DATA_DIR` in the environment belongs to someone else.
        super().__init__(**{_ENV_NAMES.get(key, key): value for key, value in values.items()})

    model: str = Field(
        default=DEFAULT_MODEL,
        validation_alias=AliasChoices("CODEWEAVER_MODEL", "LLM_PROVIDER"),
        description="Chat model as `provider:model`.",
    )
    response_language: str | None = Field(
        default=None,
        validation_alias=AliasChoices("RESPONSE_LANGUAGE"),
        description="Force the answer language (e.g. `ko`, `en`); default: the question's.",
    )
    data_dir: Path = Field(
        default_factory=lambda: Path(user_data_dir(APP_NAME)),
        validation_alias=AliasChoices("CODEWEAVER_DATA_DIR"),
    )
    cache_dir: Path = Field(
        default_factory=lambda: Path(user_cache_dir(APP_NAME)),
        validation_alias=AliasChoices("CODEWEAVER_CACHE_DIR"),
    )

    # Local model runtime.
    llm_threads: int = Field(default=0, validation_alias=AliasChoices("CODEWEAVER_LLM_THREADS"))
    llm_context: int = Field(default=4096, validation_alias=AliasChoices("CODEWEAVER_LLM_CONTEXT"))
    llm_max_tokens: int = Field(default=700, validation_alias=AliasChoices("CODEWEAVER_MAX_TOKENS"))
    temperature: float = Field(default=0.1, validation_alias=AliasChoices("CODEWEAVER_TEMPERATURE"))

    # Retrieval.
    results_per_source: int = Field(
        default=5,
        ge=1,
        le=50,
        validation_alias=AliasChoices("CODEWEAVER_RESULTS_PER_SOURCE"),
    )
    enabled_sources: str = Field(
        default="all",
        validation_alias=AliasChoices("CODEWEAVER_SOURCES"),
        description="Comma-separated source names to use, `all`, or `none`.",
    )
    source_timeout: float = Field(
        default=30.0,
        gt=0,
        le=600,
        validation_alias=AliasChoices("CODEWEAVER_SOURCE_TIMEOUT"),
        description="Seconds one source's whole search may take (its requests, retries and "
        "waits) before the answer goes on without it.",
    )
    http_timeout: float = Field(
        default=8.0,
        gt=0,
        validation_alias=AliasChoices("CODEWEAVER_HTTP_TIMEOUT"),
        description="Seconds an online source may take per request.",
    )
    connect_timeout: float = Field(
        default=1.0,
        gt=0,
        validation_alias=AliasChoices("CODEWEAVER_CONNECT_TIMEOUT"),
        description="Seconds to establish a connection; an unreachable network fails fast.",
    )
    stackexchange_url: str = Field(
        default="https://api.stackexchange.com/2.3",
        validation_alias=AliasChoices("CODEWEAVER_STACKEXCHANGE_URL"),
        description="Stack Exchange API base URL (also Stack Overflow for Teams / Enterprise).",
    )
    github_api_url: str = Field(
        default="https://api.github.com",
        validation_alias=AliasChoices("CODEWEAVER_GITHUB_API_URL"),
        description="GitHub REST API base URL (GitHub Enterprise: `https://HOST/api/v3`).",
    )
    http_cache: bool = Field(
        default=True,
        validation_alias=AliasChoices("CODEWEAVER_HTTP_CACHE"),
        description="Answer identical online-source requests from a cache on disk.",
    )
    http_cache_hours: float = Field(
        default=24.0,
        gt=0,
        validation_alias=AliasChoices("CODEWEAVER_HTTP_CACHE_HOURS"),
        description="Hours a cached online-source response is reused.",
    )
    local_code_paths: str = Field(
        default="",
        validation_alias=AliasChoices("CODEWEAVER_CODE_PATHS"),
        description="Folders searched by the local code source, separated by the OS path "
        "separator; default: the git repository of the working directory.",
    )
    project: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_PROJECT"),
        description="The project whose Python environment the installed docs come from; "
        "default: the git repository of the working directory, else that folder.",
    )
    project_python: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_PROJECT_PYTHON"),
        description="The project's Python interpreter; default: `$VIRTUAL_ENV/bin/python`, "
        "else `.venv/bin/python` or `venv/bin/python` in the project.",
    )
    python_docs: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_PYTHON_DOCS"),
        description="Folder of Python's HTML docs (the one holding `tutorial/`); default: "
        "the distribution's (`/usr/share/doc/pythonX.Y/html`, `apt install python3-doc`).",
    )
    docs_domains_file: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_DOCS_DOMAINS"),
        description="JSON file overriding the technology → official docs domains table.",
    )
    embedding_model: str = Field(
        default="minilm",
        validation_alias=AliasChoices("CODEWEAVER_EMBEDDINGS"),
        description="Embedder by name: `minilm` (English), `multilingual-e5-small` or "
        "`use-multilingual` (Korean and other languages), or `sentence-transformers:<model>`.",
    )
    kb_embedding_model: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_KB_EMBEDDINGS"),
        description="Embedder of the knowledge base; default: `CODEWEAVER_EMBEDDINGS`'s. "
        "`multilingual-e5-small` for Korean documents (the cache keeps its own embedder).",
    )
    cache_mode: Literal["exact", "semantic"] = Field(
        default="semantic",
        validation_alias=AliasChoices("CODEWEAVER_CACHE_MODE"),
        description="`exact` (normalised text) or `semantic` (cosine + verification).",
    )
    cache_threshold: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("CODEWEAVER_CACHE_THRESHOLD"),
    )
    cache_ttl_days: float = Field(
        default=30.0,
        gt=0,
        validation_alias=AliasChoices("CODEWEAVER_CACHE_TTL_DAYS"),
    )
    grounding_check: bool = Field(
        default=True,
        validation_alias=AliasChoices("CODEWEAVER_GROUNDING"),
        description="Check each answer's cited claims against its sources.",
    )
    code_check: bool = Field(
        default=True,
        validation_alias=AliasChoices("CODEWEAVER_CODE_CHECK"),
        description="Check the APIs each answer's Python code uses against the versions "
        "installed in the project; rewrite once, then note what is still missing.",
    )
    grounding_retries: int = Field(
        default=1,
        ge=0,
        le=5,
        validation_alias=AliasChoices("CODEWEAVER_GROUNDING_RETRIES"),
        description="Rewrites of an answer whose cited claim contradicts its source, before "
        "answering with a warning.",
    )
    grounding_judge: Literal["words", "model"] = Field(
        default="words",
        validation_alias=AliasChoices("CODEWEAVER_GROUNDING_JUDGE"),
        description="Who settles a claim words cannot: `words` lets it pass (measured better "
        "with the embedded 1.5B model, which rejects paraphrases) or `model` (a stronger "
        "chat model). Answers not in English are always read by the model.",
    )
    store_wait_seconds: float = Field(
        default=10.0,
        ge=0,
        validation_alias=AliasChoices("CODEWEAVER_STORE_WAIT"),
        description="Seconds to wait for another process to hand over the local vector store.",
    )
    cache_enabled: bool = Field(default=True, validation_alias=AliasChoices("CODEWEAVER_CACHE"))

    # Keys and servers: each only adds power. Secret values are never printed.
    google_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GOOGLE_API_KEY")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_BASE_URL"),
        description="An OpenAI-compatible server for `openai:` models (`codeweaver model "
        "serve`, vLLM, Ollama, LM Studio); no key needed when it asks for none.",
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY")
    )
    tavily_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TAVILY_API_KEY")
    )
    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN")
    )
    stackexchange_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("STACKEXCHANGE_KEY")
    )
    model_server_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_MODEL_SERVER_KEY"),
        description="The key `codeweaver model serve` requires of its clients (their "
        "OPENAI_API_KEY); mandatory, 16+ characters, off loopback.",
    )
    model_server_slots: int = Field(
        default=4,
        ge=1,
        le=64,
        validation_alias=AliasChoices("CODEWEAVER_MODEL_SERVER_SLOTS"),
        description="How many answers `codeweaver model serve` decodes at once (continuous "
        "batching); more wait in line.",
    )
    vector_store: str = Field(
        default="qdrant",
        validation_alias=AliasChoices("CODEWEAVER_VECTOR_STORE"),
        description="Where the cache's and the knowledge base's vectors live: `qdrant` "
        "(a local folder, or QDRANT_URL) or `milvus` (Milvus Lite in a local file, or "
        "MILVUS_URI).",
    )
    milvus_uri: str | None = Field(
        default=None,
        validation_alias=AliasChoices("MILVUS_URI"),
        description="A Milvus server (`http://host:19530`), Zilliz Cloud, or a Milvus Lite "
        "`.db` file; default: a Milvus Lite file in the data folder.",
    )
    milvus_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("MILVUS_TOKEN")
    )
    qdrant_url: str | None = Field(default=None, validation_alias=AliasChoices("QDRANT_URL"))
    qdrant_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_API_KEY")
    )
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL")
    )
    # The HTTP service (`codeweaver serve`).
    api_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_API_TOKEN"),
        description="Bearer token the API requires; mandatory off loopback.",
    )
    api_tokens_file: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_API_TOKENS"),
        description="A file of `user token` lines: one bearer token per user.",
    )
    allowed_hosts: str = Field(
        default="",
        validation_alias=AliasChoices("CODEWEAVER_ALLOWED_HOSTS"),
        description="Comma-separated host names the server answers for, besides loopback "
        "and the bound address (`*.example.com` allowed).",
    )
    oauth_issuer: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_OAUTH_ISSUER"),
        description="Issuer URL of an OAuth 2.1 authorization server whose JWT access "
        "tokens are accepted beside the static tokens; unset: OAuth off.",
    )
    oauth_resource: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_OAUTH_RESOURCE"),
        description="Public URL of /mcp (e.g. `https://cw.example.com/mcp`), named in the "
        "protected resource metadata; default: derived from each request.",
    )
    oauth_audience: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_OAUTH_AUDIENCE"),
        description="The `aud` tokens must carry; default: CODEWEAVER_OAUTH_RESOURCE "
        "(one of the two is required with the issuer).",
    )
    oauth_jwks_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_OAUTH_JWKS_URL"),
        description="The issuer's signing keys (JWKS); default: its metadata's `jwks_uri`.",
    )
    oauth_scopes: str = Field(
        default="",
        validation_alias=AliasChoices("CODEWEAVER_OAUTH_SCOPES"),
        description="Scopes every access token must hold, comma- or space-separated.",
    )
    trusted_proxies: str = Field(
        default="",
        validation_alias=AliasChoices("CODEWEAVER_TRUSTED_PROXIES"),
        description="Comma-separated proxy addresses or networks whose X-Forwarded-For "
        "is believed.",
    )
    redis_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("CODEWEAVER_REDIS_URL"),
        description="Redis shared by several server processes: one rate-limit budget and "
        "one set of run slots.",
    )
    cors_origins: str = Field(
        default="",
        validation_alias=AliasChoices("CODEWEAVER_CORS_ORIGINS"),
        description="Comma-separated origins allowed to call the API from a browser.",
    )
    api_max_body: int = Field(
        default=65536,
        ge=1024,
        validation_alias=AliasChoices("CODEWEAVER_API_MAX_BODY"),
        description="Largest request body, in bytes.",
    )
    api_rate_per_minute: int = Field(
        default=30,
        ge=1,
        validation_alias=AliasChoices("CODEWEAVER_API_RATE"),
        description="Chat requests per client per minute.",
    )
    api_concurrency: int | None = Field(
        default=None,
        ge=1,
        validation_alias=AliasChoices("CODEWEAVER_API_CONCURRENCY"),
        description="Answers computed at once (default: 1 for a local model, 8 otherwise).",
    )
    api_queue: int = Field(
        default=8,
        ge=0,
        validation_alias=AliasChoices("CODEWEAVER_API_QUEUE"),
        description="Answers that may wait for a slot before the API answers 503.",
    )
    mcp_sessions_per_user: int = Field(
        default=16,
        ge=1,
        validation_alias=AliasChoices("CODEWEAVER_MCP_SESSIONS"),
        description="MCP requests one user (one client address without tokens) may have "
        "in flight at /mcp at once, on each replica: a running tool call and an open "
        "`subscriptions/listen` stream hold one each until they end or the client hangs "
        "up; a request beyond them gets 429. (/mcp keeps no sessions; the name is kept so "
        "configurations stay valid.)",
    )
    mcp_session_idle_seconds: float = Field(
        default=300.0,
        gt=0,
        validation_alias=AliasChoices("CODEWEAVER_MCP_IDLE"),
        description="No effect: /mcp serves each request on its own and keeps no sessions "
        "to close (replicas behind round robin need that); a request's place is freed when "
        "it ends. Still accepted, so configurations that set it keep loading.",
    )
    # LangSmith's names first; LangChain's older ones are still read (by LangChain too).
    langchain_tracing_v2: bool = Field(
        default=False,
        validation_alias=AliasChoices("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"),
    )
    langchain_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
    )

    @field_validator("model")
    @classmethod
    def _model_has_provider(cls, value: str) -> str:
        value = value.strip()
        if ":" not in value:
            raise ValueError(
                f"model {value!r} must be `provider:model`, e.g. {DEFAULT_MODEL!r} "
                "or `openai:gpt-4o`"
            )
        return value

    @property
    def kb_embedder(self) -> str:
        """The knowledge base's embedder: its own setting, else the general one."""
        return (self.kb_embedding_model or "").strip() or self.embedding_model

    @field_validator("project", "project_python", "python_docs", mode="before")
    @classmethod
    def _blank_path_is_unset(cls, value: object) -> object:
        # An empty variable means "not set", not the working directory (Path("") is ".").
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("response_language")
    @classmethod
    def _normalise_language(cls, value: str | None) -> str | None:
        return value.strip().lower() or None if value else None

    def source_enabled(self, name: str) -> bool:
        chosen = {part.strip().lower() for part in self.enabled_sources.split(",") if part.strip()}
        if not chosen or "none" in chosen:
            return False
        return "all" in chosen or name.lower() in chosen

    @property
    def provider(self) -> str:
        return self.model.split(":", 1)[0]

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip() for o in self.cors_origins.split(",") if o.strip()]

    @property
    def allowed_host_list(self) -> list[str]:
        return [h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip()]

    @property
    def trusted_proxy_list(self) -> list[str]:
        return [p.strip() for p in self.trusted_proxies.split(",") if p.strip()]

    @property
    def checkpoint_path(self) -> Path:
        return self.data_dir / "threads.sqlite"

    @property
    def answer_cache_path(self) -> Path:
        return self.data_dir / "answer_cache.sqlite"

    @property
    def qdrant_path(self) -> Path:
        return self.data_dir / "qdrant"

    @property
    def milvus_lite_path(self) -> Path:
        return self.data_dir / "milvus.db"

    @property
    def models_dir(self) -> Path:
        return self.cache_dir / "models"

    @property
    def http_cache_dir(self) -> Path:
        return self.cache_dir / "http"

    @property
    def docs_index_dir(self) -> Path:
        return self.cache_dir / "installed_docs"

    def key_status(self) -> dict[str, bool]:
        """Which secrets are set — never their values."""
        names = [
            "google_api_key",
            "openai_api_key",
            "anthropic_api_key",
            "tavily_api_key",
            "github_token",
            "stackexchange_key",
            "qdrant_api_key",
            "milvus_token",
            "model_server_key",
            "database_url",
            "langchain_api_key",
            "api_token",
            "redis_url",
        ]
        return {name.upper(): getattr(self, name) is not None for name in names}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings read from the environment (tests build their own)."""
    return Settings()


# Each field's first documented name, which an explicit keyword argument is passed under.
_ENV_NAMES: dict[str, str] = {
    name: str(field.validation_alias.choices[0])
    for name, field in Settings.model_fields.items()
    if isinstance(field.validation_alias, AliasChoices)
}
