"""Settings precedence and the model registry's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from codeweaver.agent.prompts import answer_messages
from codeweaver.config import DEFAULT_MODEL, Settings
from codeweaver.llm.registry import ModelConfigError, ModelRef, create_chat_model
from codeweaver.llm.scripted import echo_model


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CODEWEAVER_MODEL", "LLM_PROVIDER", "RESPONSE_LANGUAGE", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


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
    assert settings.key_status()["GITHUB_TOKEN"] is True
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


def test_bare_field_names_in_the_environment_are_someone_elses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    for name in ("CODEWEAVER_MODEL", "LLM_PROVIDER", "CODEWEAVER_TEMPERATURE"):
        monkeypatch.delenv(name, raising=False)
    for bare, value in {
        "MODEL": "openai:gpt-4o",
        "TEMPERATURE": "1.5",
        "DATA_DIR": "/elsewhere",
        "API_TOKEN": "not-ours-0123456789",
        "CACHE_ENABLED": "false",
    }.items():
        monkeypatch.setenv(bare, value)
    (tmp_path / ".env").write_text("MODEL=anthropic:claude\nLLM_THREADS=7\n")
    settings = Settings()
    assert settings.model == DEFAULT_MODEL
    assert settings.temperature == 0.1
    assert settings.api_token is None
    assert settings.cache_enabled is True
    assert settings.llm_threads == 0
    assert str(settings.data_dir) != "/elsewhere"
    # In code, fields are still set by their own names, above the environment.
    monkeypatch.setenv("CODEWEAVER_TEMPERATURE", "0.7")
    assert Settings().temperature == 0.7
    assert Settings(temperature=0.2, data_dir=tmp_path).temperature == 0.2


def test_the_knowledge_base_embedder_defaults_to_the_general_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEWEAVER_KB_EMBEDDINGS", raising=False)
    monkeypatch.setenv("CODEWEAVER_EMBEDDINGS", "use-multilingual")
    assert Settings().kb_embedder == "use-multilingual"
    monkeypatch.setenv("CODEWEAVER_KB_EMBEDDINGS", " multilingual-e5-small ")
    settings = Settings()
    assert settings.kb_embedder == "multilingual-e5-small"
    assert settings.embedding_model == "use-multilingual"  # the cache keeps its own
    monkeypatch.setenv("CODEWEAVER_KB_EMBEDDINGS", "  ")
    assert Settings().kb_embedder == "use-multilingual"
