"""Settings: the names each is read under, precedence, and the model registry's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from codeweaver.agent.prompts import answer_messages
from codeweaver.config import DEFAULT_MODEL, Settings
from codeweaver.config_service import ENV_PREFIX
from codeweaver.llm.registry import ModelConfigError, ModelRef, create_chat_model
from codeweaver.llm.scripted import echo_model

# Every environment name a setting is read under: (name, field, value set, value read).
ENV_NAMES: list[tuple[str, str, str, object]] = [
    ("CODEWEAVER_MODEL", "model", "openai:gpt-4o", "openai:gpt-4o"),
    ("LLM_PROVIDER", "model", "anthropic:claude", "anthropic:claude"),
    ("RESPONSE_LANGUAGE", "response_language", "KO", "ko"),
    ("CODEWEAVER_DATA_DIR", "data_dir", "/srv/cw/data", Path("/srv/cw/data")),
    ("CODEWEAVER_CACHE_DIR", "cache_dir", "/srv/cw/cache", Path("/srv/cw/cache")),
    ("CODEWEAVER_LLM_THREADS", "llm_threads", "3", 3),
    ("CODEWEAVER_LLM_CONTEXT", "llm_context", "2048", 2048),
    ("CODEWEAVER_MAX_TOKENS", "max_tokens", "321", 321),
    ("CODEWEAVER_TEMPERATURE", "temperature", "0.6", 0.6),
    ("CODEWEAVER_RESULTS_PER_SOURCE", "results_per_source", "7", 7),
    ("CODEWEAVER_ANSWER_SOURCE_TOKENS", "answer_source_tokens", "600", 600),
    ("CODEWEAVER_SOURCES", "enabled_sources", "github", "github"),
    ("CODEWEAVER_SOURCE_TIMEOUT", "source_timeout", "12.5", 12.5),
    ("CODEWEAVER_HTTP_TIMEOUT", "http_timeout", "3", 3.0),
    ("CODEWEAVER_CONNECT_TIMEOUT", "connect_timeout", "0.5", 0.5),
    ("CODEWEAVER_STACKEXCHANGE_URL", "stackexchange_url", "http://se.test", "http://se.test"),
    ("CODEWEAVER_GITHUB_API_URL", "github_api_url", "http://gh.test/v3", "http://gh.test/v3"),
    ("CODEWEAVER_HTTP_CACHE", "http_cache", "false", False),
    ("CODEWEAVER_HTTP_CACHE_HOURS", "http_cache_hours", "2", 2.0),
    ("CODEWEAVER_CODE_PATHS", "code_paths", "/src/a", "/src/a"),
    ("CODEWEAVER_PROJECT", "project", "/work/proj", Path("/work/proj")),
    ("CODEWEAVER_PROJECT_PYTHON", "project_python", "/usr/bin/py", Path("/usr/bin/py")),
    ("CODEWEAVER_PYTHON_DOCS", "python_docs", "/docs/html", Path("/docs/html")),
    ("CODEWEAVER_DOCS_DOMAINS", "docs_domains", "/etc/d.json", Path("/etc/d.json")),
    ("CODEWEAVER_EMBEDDINGS", "embeddings", "use-multilingual", "use-multilingual"),
    ("CODEWEAVER_KB_EMBEDDINGS", "kb_embeddings", "multilingual-e5-small", "multilingual-e5-small"),
    ("CODEWEAVER_CACHE_MODE", "cache_mode", "exact", "exact"),
    ("CODEWEAVER_CACHE_THRESHOLD", "cache_threshold", "0.8", 0.8),
    ("CODEWEAVER_CACHE_TTL_DAYS", "cache_ttl_days", "3", 3.0),
    ("CODEWEAVER_GROUNDING", "grounding", "false", False),
    ("CODEWEAVER_CODE_CHECK", "code_check", "false", False),
    ("CODEWEAVER_GROUNDING_RETRIES", "grounding_retries", "3", 3),
    ("CODEWEAVER_GROUNDING_JUDGE", "grounding_judge", "model", "model"),
    ("CODEWEAVER_STORE_WAIT", "store_wait", "0.5", 0.5),
    ("CODEWEAVER_CACHE", "cache_enabled", "false", False),
    ("GOOGLE_API_KEY", "google_api_key", "g-key", "g-key"),
    ("OPENAI_API_KEY", "openai_api_key", "sk-key", "sk-key"),
    ("OPENAI_BASE_URL", "openai_base_url", "http://llm.test/v1", "http://llm.test/v1"),
    ("ANTHROPIC_API_KEY", "anthropic_api_key", "a-key", "a-key"),
    ("TAVILY_API_KEY", "tavily_api_key", "t-key", "t-key"),
    ("GITHUB_TOKEN", "github_token", "ghp_key", "ghp_key"),
    ("STACKEXCHANGE_KEY", "stackexchange_key", "se-key", "se-key"),
    ("CODEWEAVER_MODEL_SERVER_KEY", "model_server_key", "m" * 16, "m" * 16),
    ("CODEWEAVER_MODEL_SERVER_SLOTS", "model_server_slots", "2", 2),
    ("CODEWEAVER_VECTOR_STORE", "vector_store", "milvus", "milvus"),
    ("MILVUS_URI", "milvus_uri", "http://milvus.test:19530", "http://milvus.test:19530"),
    ("MILVUS_TOKEN", "milvus_token", "mv-key", "mv-key"),
    ("QDRANT_URL", "qdrant_url", "http://qdrant.test:6333", "http://qdrant.test:6333"),
    ("QDRANT_API_KEY", "qdrant_api_key", "q-key", "q-key"),
    ("DATABASE_URL", "database_url", "postgresql://u@db/cw", "postgresql://u@db/cw"),
    ("CODEWEAVER_API_TOKEN", "api_token", "a" * 16, "a" * 16),
    ("CODEWEAVER_API_TOKENS", "api_tokens", "/etc/cw/tokens", Path("/etc/cw/tokens")),
    ("CODEWEAVER_ALLOWED_HOSTS", "allowed_hosts", "cw.test", "cw.test"),
    ("CODEWEAVER_OAUTH_ISSUER", "oauth_issuer", "https://idp.test", "https://idp.test"),
    ("CODEWEAVER_OAUTH_RESOURCE", "oauth_resource", "https://cw.test/mcp", "https://cw.test/mcp"),
    ("CODEWEAVER_OAUTH_AUDIENCE", "oauth_audience", "cw", "cw"),
    ("CODEWEAVER_OAUTH_JWKS_URL", "oauth_jwks_url", "https://idp.test/k", "https://idp.test/k"),
    ("CODEWEAVER_OAUTH_SCOPES", "oauth_scopes", "read,write", "read,write"),
    ("CODEWEAVER_TRUSTED_PROXIES", "trusted_proxies", "10.0.0.0/8", "10.0.0.0/8"),
    ("CODEWEAVER_REDIS_URL", "redis_url", "redis://r.test/0", "redis://r.test/0"),
    ("CODEWEAVER_CORS_ORIGINS", "cors_origins", "https://a.test", "https://a.test"),
    ("CODEWEAVER_API_MAX_BODY", "api_max_body", "2048", 2048),
    ("CODEWEAVER_API_RATE", "api_rate_per_minute", "5", 5),
    ("CODEWEAVER_API_CONCURRENCY", "api_concurrency", "3", 3),
    ("CODEWEAVER_API_QUEUE", "api_queue", "0", 0),
    ("CODEWEAVER_MCP_SESSIONS", "mcp_sessions", "2", 2),
    ("CODEWEAVER_MCP_IDLE", "mcp_idle", "60", 60.0),
    ("LANGSMITH_TRACING", "langchain_tracing_v2", "true", True),
    ("LANGCHAIN_TRACING_V2", "langchain_tracing_v2", "true", True),
    ("LANGSMITH_API_KEY", "langchain_api_key", "ls-key", "ls-key"),
    ("LANGCHAIN_API_KEY", "langchain_api_key", "lc-key", "lc-key"),
]
READ_NAMES = {name for name, *_ in ENV_NAMES}
ALIASED = {name for name, info in Settings.model_fields.items() if info.validation_alias}
# Names no setting answers to: a field's own name under the prefix when it has an alias,
# and every name without the prefix that is not a documented one.
PREFIXED_FIELD_NAMES = {
    ENV_PREFIX + field.upper(): (ENV_PREFIX + field.upper(), field, value, read)
    for _, field, value, read in ENV_NAMES
    if field in ALIASED and ENV_PREFIX + field.upper() not in READ_NAMES
}
BARE_NAMES = {
    bare: (bare, field, value, read)
    for name, field, value, read in ENV_NAMES
    for bare in (name.removeprefix(ENV_PREFIX), field.upper())
    if bare not in READ_NAMES
}


def plain(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def set_variable(where: str, name: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if where == "environment":
        monkeypatch.setenv(name, value)
    else:
        Path(".env").write_text(f"{name}={value}\n")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in READ_NAMES | set(BARE_NAMES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env


@pytest.mark.parametrize("where", ["environment", ".env"])
@pytest.mark.parametrize(("name", "field", "value", "read"), ENV_NAMES)
def test_every_documented_name_is_read(
    monkeypatch: pytest.MonkeyPatch, where: str, name: str, field: str, value: str, read: object
) -> None:
    assert plain(getattr(Settings(), field)) != read
    set_variable(where, name, value, monkeypatch)
    assert plain(getattr(Settings(), field)) == read


def test_every_field_is_read_and_those_without_an_alias_by_the_prefix() -> None:
    assert {field for _, field, *_ in ENV_NAMES} == set(Settings.model_fields)
    for field in set(Settings.model_fields) - ALIASED:
        assert ENV_PREFIX + field.upper() in READ_NAMES, field
    assert {"CODEWEAVER_SOURCES", "CODEWEAVER_CACHE", "CODEWEAVER_API_RATE"} <= READ_NAMES


@pytest.mark.parametrize(("name", "field", "value", "read"), ENV_NAMES)
def test_an_explicit_argument_beats_the_environment(
    monkeypatch: pytest.MonkeyPatch, name: str, field: str, value: str, read: object
) -> None:
    monkeypatch.setenv(name, value)
    assert plain(getattr(Settings(), field)) == read
    default = Settings.model_fields[field].get_default(call_default_factory=True)
    assert plain(getattr(Settings(**{field: default}), field)) == plain(default)


@pytest.mark.parametrize("where", ["environment", ".env"])
@pytest.mark.parametrize(
    ("name", "field", "value", "read"), [*PREFIXED_FIELD_NAMES.values(), *BARE_NAMES.values()]
)
def test_undocumented_names_are_someone_elses(
    monkeypatch: pytest.MonkeyPatch, where: str, name: str, field: str, value: str, read: object
) -> None:
    set_variable(where, name, value, monkeypatch)
    assert plain(getattr(Settings(), field)) != read


def test_unknown_prefixed_names_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEWEAVER_NO_SUCH_KNOB", "1")
    Path(".env").write_text("CODEWEAVER_OTHER_KNOB=2\nCODEWEAVER_TEMPERATURE=0.3\n")
    settings = Settings()
    assert settings.temperature == 0.3
    assert not hasattr(settings, "no_such_knob") and not hasattr(settings, "other_knob")


def test_default_then_dotenv_then_env_then_explicit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert Settings().model == DEFAULT_MODEL
    (tmp_path / ".env").write_text("CODEWEAVER_MODEL=ollama:from-dotenv\nRESPONSE_LANGUAGE=ko\n")
    assert Settings().model == "ollama:from-dotenv"
    monkeypatch.setenv("CODEWEAVER_MODEL", "openai:from-env")
    assert Settings().model == "openai:from-env"
    assert Settings(model="anthropic:explicit").model == "anthropic:explicit"
    assert Settings().response_language == "ko"


def test_llm_provider_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_PROVIDER", "google_genai:gemini-2.0-flash")
    assert Settings().model == "google_genai:gemini-2.0-flash"


def test_model_without_provider_is_rejected() -> None:
    with pytest.raises(ValidationError, match="provider:model"):
        Settings(model="gpt-4o")


def test_secrets_are_reported_as_set_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_value")
    settings = Settings()
    from codeweaver.sources.keys import key_status  # the sources' keys are theirs to name

    assert key_status(settings)["GITHUB_TOKEN"] is True
    assert "ghp_value" not in repr(settings)


@pytest.mark.parametrize(
    ("tracing", "key"),
    [("LANGSMITH_TRACING", "LANGSMITH_API_KEY"), ("LANGCHAIN_TRACING_V2", "LANGCHAIN_API_KEY")],
)
def test_langsmith_is_read_by_its_current_names_and_the_older_ones(
    monkeypatch: pytest.MonkeyPatch, tracing: str, key: str
) -> None:
    for name in (
        "LANGSMITH_TRACING",
        "LANGSMITH_API_KEY",
        "LANGCHAIN_TRACING_V2",
        "LANGCHAIN_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(tracing, "true")
    monkeypatch.setenv(key, "lsv2_value")
    settings = Settings()
    assert settings.langchain_tracing_v2 is True
    assert settings.key_status()["LANGCHAIN_API_KEY"] is True


def test_the_source_timeout_is_a_setting_the_graph_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    from codeweaver.factory import build_deps

    monkeypatch.setenv("CODEWEAVER_SOURCE_TIMEOUT", "12.5")
    settings = Settings(enabled_sources="none", cache_enabled=False, code_check=False)
    assert settings.source_timeout == 12.5
    assert build_deps(settings, llm=echo_model()).source_timeout == 12.5
    with pytest.raises(ValidationError):
        Settings(source_timeout=0)


def test_sources_selection() -> None:
    assert Settings().source_enabled("installed_docs")
    chosen = Settings(enabled_sources="github, installed_docs")
    assert chosen.source_enabled("installed_docs") and not chosen.source_enabled("stackoverflow")
    assert not Settings(enabled_sources="none").source_enabled("github")


def test_model_ref_parsing() -> None:
    assert ModelRef.parse("local:/models/x.gguf") == ModelRef("local", "/models/x.gguf")
    with pytest.raises(ModelConfigError):
        ModelRef.parse("local:")


def test_cloud_provider_needs_its_key_or_extra(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match=r"codeweaver\[openai\]|OPENAI_API_KEY"):
        create_chat_model("openai:gpt-4o", Settings())


def test_unknown_local_alias() -> None:
    with pytest.raises(ModelConfigError, match="unknown local model"):
        create_chat_model("local:llama-70b", Settings())


def test_scripted_echo_is_available() -> None:
    model = create_chat_model("scripted:echo", Settings())
    reply = model.invoke(answer_messages("What is a venv?", "en", "learning", []))
    assert reply.content == "Scripted answer to: What is a venv?"


def test_the_knowledge_base_embedder_defaults_to_the_general_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEWEAVER_KB_EMBEDDINGS", raising=False)
    monkeypatch.setenv("CODEWEAVER_EMBEDDINGS", "use-multilingual")
    assert Settings().kb_embedder == "use-multilingual"
    monkeypatch.setenv("CODEWEAVER_KB_EMBEDDINGS", " multilingual-e5-small ")
    settings = Settings()
    assert settings.kb_embedder == "multilingual-e5-small"
    assert settings.embeddings == "use-multilingual"  # the cache keeps its own
    monkeypatch.setenv("CODEWEAVER_KB_EMBEDDINGS", "  ")
    assert Settings().kb_embedder == "use-multilingual"
