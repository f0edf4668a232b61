"""Build what answers from settings: the model, the sources, the cache, the code check.

`build_deps` is the one builder of the dependencies: the service every door opens
(`api.startup.open_service`) and the LangGraph Server entry (`studio`) use it. The
Python API's `open_assistant` runs an assistant on them with the service's thread store.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from codeweaver.agent.deps import Deps
from codeweaver.agent.runner import Assistant
from codeweaver.codecheck import ApiIndex, CodeChecker, NpmApi
from codeweaver.config import Settings
from codeweaver.llm.registry import create_chat_model
from codeweaver.llm.weights import ProgressCallback
from codeweaver.memory.caches import build_cache
from codeweaver.memory.sessions import open_thread_store
from codeweaver.sources.base import (
    PhaseProgress,
    Preparable,
    Source,
    create_source,
    source_names,
)


def build_sources(settings: Settings) -> dict[str, Source]:
    """Every registered source the settings enable, by name."""
    return {
        name: create_source(name, settings)
        for name in source_names()
        if settings.source_enabled(name)
    }


def build_deps(
    settings: Settings,
    *,
    llm: BaseChatModel | None = None,
    progress: ProgressCallback | None = None,
) -> Deps:
    """Everything the graph needs; the local model itself loads on its first call."""
    return Deps(
        llm=llm or create_chat_model(settings.model, settings, progress),
        settings=settings,
        sources=build_sources(settings),
        cache=build_cache(settings),
        model_name=settings.model,
        source_timeout=settings.source_timeout,
        code_checker=build_code_checker(settings),
    )


def build_code_checker(settings: Settings) -> CodeChecker | None:
    """The code check over the project's environment (CodeWeaver's own when there is
    none), or None when switched off."""
    if not settings.code_check:
        return None
    return CodeChecker(lambda: code_api(settings)[0], lambda: code_npm(settings))


def code_api(settings: Settings) -> tuple[ApiIndex, str]:
    """The installed APIs of the project's environment (CodeWeaver's own when there is
    none), and which environment that is."""
    from codeweaver.sources.installed_docs import find_project_for

    env = find_project_for(settings).env
    if env is not None:
        api = ApiIndex([*env.site_dirs, env.stdlib], python_version=env.version)
        return api, f"{env.python} (Python {env.version})"
    paths = sysconfig.get_paths()
    site = dict.fromkeys([Path(paths["purelib"]), Path(paths["platlib"])])
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    api = ApiIndex([*site, Path(paths["stdlib"])], python_version=version)
    return api, f"CodeWeaver's own environment (Python {version})"


def code_npm(settings: Settings) -> NpmApi | None:
    """The npm modules of the project's `node_modules` (the nearest from the project
    folder up to its root), or None when it has none."""
    from codeweaver.sources.npm_docs import project_folders
    from codeweaver.sources.npm_docs.discover import find_node_modules

    folder = find_node_modules(project_folders(settings.project))
    return NpmApi(folder) if folder is not None else None


@asynccontextmanager
async def open_assistant(deps: Deps) -> AsyncIterator[Assistant]:
    """An assistant whose threads persist where the service keeps them (the data
    directory's SQLite file, or PostgreSQL when `DATABASE_URL` is set)."""
    async with open_thread_store(deps.settings) as store:
        yield Assistant(deps, checkpointer=store.checkpointer)


def prepare_sources(
    deps: Deps,
    progress: PhaseProgress | None = None,
    on_source: Callable[[str | None], None] | None = None,
) -> list[str]:
    """Run each ready source's one-time preparation; returns the problems met, if any.
    `on_source` hears the name of the source being prepared, then None when all are."""
    problems: list[str] = []
    for source in deps.sources.values():
        if isinstance(source, Preparable) and source.status().usable:
            if on_source is not None:
                on_source(source.name)
            try:
                source.prepare(progress)
            except Exception as exc:  # the run goes on; the source reports it when searched
                problems.append(f"{source.name}: {exc}")
    if on_source is not None:
        on_source(None)
    return problems
