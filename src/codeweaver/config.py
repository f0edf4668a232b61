"""One typed settings object. Precedence: explicit argument > environment > `.env` > default.

Each field is read from `CODEWEAVER_<FIELD>`; only names known from elsewhere (providers'
keys, servers' addresses, LangSmith's) and a few shorter ones are spelled out as aliases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from codeweaver.config_service import ENV_PREFIX, ServiceSettings

APP_NAME = "codeweaver"
DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"


class Settings(ServiceSettings):
    """Every knob CodeWeaver reads. All optional; keys and servers only add power."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    def __init__(self, **values: Any) -> None:
        # A field read under an alias is still set in code by its own name. pydantic's
        # `validate_by_name` would allow that too, but would also read `CODEWEAVER_<FIELD>`
        # for these fields (`CODEWEAVER_GOOGLE_API_KEY`), names that were never read.
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
        description="Threads, the answer cache and the local vector store.",
    )
    cache_dir: Path = Field(
        default_factory=lambda: Path(user_cache_dir(APP_NAME)),
        description="Assembled model weights, the installed-docs index and the online "
        "sources' HTTP cache.",
    )

    # Local model runtime.
    llm_threads: int = Field(default=0, description="llama.cpp threads; 0: all cores.")
    llm_context: int = Field(default=4096, description="Local model context window, in tokens.")
    max_tokens: int = Field(default=700, description="Longest answer, in tokens.")
    temperature: float = Field(default=0.1, description="Sampling temperature.")

    # Retrieval.
    results_per_source: int = Field(
        default=5,
        ge=1,
        le=50,
        description="Base number of results per source (the question's intent scales it).",
    )
    answer_source_tokens: int = Field(
        default=1000,
        ge=0,
        le=32000,
        description="Tokens of the closest source shown whole in the answer prompt "
        "(within the model's context; 0: every source summarised).",
    )
    enabled_sources: str = Field(
        default="all",
        # Read as CODEWEAVER_SOURCES; the field keeps its longer name, used all over.
        validation_alias=AliasChoices("CODEWEAVER_SOURCES"),
        description="Comma-separated source names to use, `all`, or `none`.",
    )
    source_timeout: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Seconds one source's whole search may take (its requests, retries and "
        "waits) before the answer goes on without it.",
    )
    http_timeout: float = Field(
        default=8.0, gt=0, description="Seconds an online source may take per request."
    )
    connect_timeout: float = Field(
        default=1.0,
        gt=0,
        description="Seconds to establish a connection; an unreachable network fails fast.",
    )
    stackexchange_url: str = Field(
        default="https://api.stackexchange.com/2.3",
        description="Stack Exchange API base URL (also Stack Overflow for Teams / Enterprise).",
    )
    github_api_url: str = Field(
        default="https://api.github.com",
        description="GitHub REST API base URL (GitHub Enterprise: `https://HOST/api/v3`).",
    )
    http_cache: bool = Field(
        default=True,
        description="Answer identical online-source requests from a cache on disk.",
    )
    http_cache_hours: float = Field(
        default=24.0, gt=0, description="Hours a cached online-source response is reused."
    )
    code_paths: str = Field(
        default="",
        description="Folders searched by the local code source, separated by the OS path "
        "separator; default: the git repository of the working directory.",
    )
    project: Path | None = Field(
        default=None,
        description="The project whose Python environment the installed docs come from; "
        "default: the git repository of the working directory, else that folder.",
    )
    project_python: Path | None = Field(
        default=None,
        description="The project's Python interpreter; default: `$VIRTUAL_ENV/bin/python`, "
        "else `.venv/bin/python` or `venv/bin/python` in the project.",
    )
    python_docs: Path | None = Field(
        default=None,
        description="Folder of Python's HTML docs (the one holding `tutorial/`); default: "
        "the distribution's (`/usr/share/doc/pythonX.Y/html`, `apt install python3-doc`).",
    )
    docs_domains: Path | None = Field(
        default=None,
        description="JSON file overriding the technology → official docs domains table.",
    )
    embeddings: str = Field(
        default="minilm",
        description="Embedder by name: `minilm` (English), `multilingual-e5-small` or "
        "`use-multilingual` (Korean and other languages), or `sentence-transformers:<model>`.",
    )
    kb_embeddings: str | None = Field(
        default=None,
        description="Embedder of the knowledge base; default: `CODEWEAVER_EMBEDDINGS`'s. "
        "`multilingual-e5-small` for Korean documents (the cache keeps its own embedder).",
    )
    cache_mode: Literal["exact", "semantic"] = Field(
        default="semantic",
        description="`exact` (normalised text) or `semantic` (cosine + verification).",
    )
    cache_threshold: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="Cosine similarity from which a cached question is a semantic match "
        "candidate (then verified); 0.7 is MiniLM's.",
    )
    cache_ttl_days: float = Field(
        default=30.0, gt=0, description="Days an answer-cache entry lives."
    )
    grounding: bool = Field(
        default=True, description="Check each answer's cited claims against its sources."
    )
    code_check: bool = Field(
        default=True,
        description="Check the APIs each answer's Python code uses against the versions "
        "installed in the project; rewrite once, then note what is still missing.",
    )
    grounding_retries: int = Field(
        default=1,
        ge=0,
        le=5,
        description="Rewrites of an answer whose cited claim contradicts its source, before "
        "answering with a warning.",
    )
    grounding_judge: Literal["words", "model"] = Field(
        default="words",
        description="Who settles a claim words cannot: `words` lets it pass (measured better "
        "with the embedded 1.5B model, which rejects paraphrases) or `model` (a stronger "
        "chat model). Answers not in English are always read by the model.",
    )
    store_wait: float = Field(
        default=10.0,
        ge=0,
        description="Seconds to wait for another process to hand over the local vector store.",
    )
    cache_enabled: bool = Field(
        default=True,
        # Read as CODEWEAVER_CACHE; the field keeps its longer name, used all over.
        validation_alias=AliasChoices("CODEWEAVER_CACHE"),
        description="Use the answer cache.",
    )

    # Keys and servers: each only adds power, under the name its provider documents.
    # Secret values are never printed.
    google_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GOOGLE_API_KEY"),
        description="Key of Google's models (`google_genai:`).",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_API_KEY"),
        description="Key of OpenAI's models (`openai:`), or of the server at OPENAI_BASE_URL.",
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_BASE_URL"),
        description="An OpenAI-compatible server for `openai:` models (`codeweaver model "
        "serve`, vLLM, Ollama, LM Studio); no key needed when it asks for none.",
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("ANTHROPIC_API_KEY"),
        description="Key of Anthropic's models (`anthropic:`).",
    )
    tavily_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("TAVILY_API_KEY"),
        description="Enables official-docs search through Tavily.",
    )
    github_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GITHUB_TOKEN"),
        description="Enables GitHub code search; raises GitHub issue search's limits.",
    )
    stackexchange_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("STACKEXCHANGE_KEY"),
        description="A higher Stack Exchange quota (Stack Overflow works without it).",
    )
    model_server_key: SecretStr | None = Field(
        default=None,
        description="The key `codeweaver model serve` requires of its clients (their "
        "OPENAI_API_KEY); mandatory, 16+ characters, off loopback.",
    )
    model_server_slots: int = Field(
        default=4,
        ge=1,
        le=64,
        description="How many answers `codeweaver model serve` decodes at once (continuous "
        "batching); more wait in line.",
    )
    vector_store: str = Field(
        default="qdrant",
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
        default=None,
        validation_alias=AliasChoices("MILVUS_TOKEN"),
        description="Token of the Milvus server or Zilliz Cloud at MILVUS_URI.",
    )
    qdrant_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("QDRANT_URL"),
        description="A Qdrant server (needed when several processes share the vectors); "
        "default: a folder in the data folder.",
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("QDRANT_API_KEY"),
        description="Key of the Qdrant server at QDRANT_URL.",
    )
    database_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL"),
        description="PostgreSQL for the service's threads and session index "
        "(`postgresql://user@host:5432/db`).",
    )
    # LangSmith's names first; LangChain's older ones are still read (by LangChain too).
    langchain_tracing_v2: bool = Field(
        default=False,
        validation_alias=AliasChoices("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"),
        description="LangSmith tracing.",
    )
    langchain_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"),
        description="LangSmith's API key.",
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
        return (self.kb_embeddings or "").strip() or self.embeddings

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
            "qdrant_api_key",
            "milvus_token",
            "model_server_key",
            "database_url",
            "langchain_api_key",
            "api_token",
            "redis_url",
        ]
        return {name.upper(): getattr(self, name) is not None for name in names}


# Each aliased field's first name, which an explicit keyword argument is passed under.
_ENV_NAMES: dict[str, str] = {
    name: str(field.validation_alias.choices[0])
    for name, field in Settings.model_fields.items()
    if isinstance(field.validation_alias, AliasChoices)
}
