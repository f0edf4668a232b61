"""`codeweaver doctor`: what this installation can do right now, without side effects.

`doctor --live` adds one real search per online source (`collect_live`, `render_live`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from codeweaver.cli.terminal import terminal_safe
from codeweaver.config import Settings

if TYPE_CHECKING:
    from codeweaver.sources.probe import ProbeReport


def _model_server(settings: Settings) -> str | None:
    """The OpenAI-compatible server an `openai:` model is reached at, asked now."""
    from codeweaver.api.health import model_server_health, model_server_url
    from codeweaver.llm.remote import probe_model_server

    url = model_server_url(settings)
    if url is None:
        return None
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    found = model_server_health(settings, probe_model_server(url, api_key=key))
    if not found["reachable"]:
        return f"{found['url']}: not reachable ({found['error']})"
    at_once = found["concurrency"]
    serves = ", ".join(found["models"]) or "no model"
    return f"{found['url']}: serves {serves}" + (
        f", {at_once} answer{'s' if at_once != 1 else ''} at once" if at_once else ""
    )


def _model_report(settings: Settings) -> dict[str, Any]:
    from codeweaver.llm.registry import (
        LOCAL_EXTRA_HINT,
        ModelConfigError,
        ModelRef,
        local_runtime_installed,
        provider_names,
    )
    from codeweaver.llm.weights import KNOWN_WEIGHTS, weights_status

    report: dict[str, Any] = {"model": settings.model}
    try:
        ref = ModelRef.parse(settings.model)
    except ModelConfigError as exc:
        return {**report, "status": f"invalid: {exc}"}
    report["provider"] = ref.provider
    if ref.provider not in provider_names():
        report["status"] = f"unknown provider; known: {', '.join(provider_names())}"
    elif ref.provider == "local":
        spec = KNOWN_WEIGHTS.get(ref.name)
        report["weights"] = (
            weights_status(spec, settings.models_dir) if spec else f"GGUF file {ref.name}"
        )
        report["runtime"] = (
            "llama.cpp (xllamacpp) installed" if local_runtime_installed() else LOCAL_EXTRA_HINT
        )
    elif (server := _model_server(settings)) is not None:
        report["server"] = server
    report["other_local_models"] = {
        alias: weights_status(spec, settings.models_dir)
        for alias, spec in KNOWN_WEIGHTS.items()
        if alias != ref.name
    }
    return report


def _stores(settings: Settings) -> dict[str, str]:
    """Where each store lives, as the service would open it (never a secret)."""
    from codeweaver.memory.vector_store import store_description

    where = store_description(settings)
    if not settings.cache_enabled:
        cache = "disabled"
    elif settings.cache_mode == "semantic":
        cache = f"semantic ({settings.embeddings} vectors, {where})"
    else:
        cache = f"exact match (sqlite): {settings.answer_cache_path}"
    return {
        "threads": "postgresql (DATABASE_URL)"
        if settings.database_url is not None
        else f"sqlite: {settings.checkpoint_path}",
        "answer_cache": cache,
        "vectors": where,
        "rate_limit": "redis (CODEWEAVER_REDIS_URL)" if settings.redis_url else "in memory",
        "installed_docs_index": str(settings.docs_index_dir),
    }


def _plugin_failures() -> dict[str, str]:
    """Entry-point plugins that failed to load, by `group:name`; empty when all loaded."""
    from codeweaver.embeddings.base import EMBEDDERS
    from codeweaver.llm.registry import PROVIDERS
    from codeweaver.sources.base import SOURCES

    return {
        f"{registry.group}:{name}": why
        for registry in (PROVIDERS, SOURCES, EMBEDDERS)
        for name, why in registry.failed_plugins().items()
    }


def _project_report(settings: Settings) -> dict[str, Any]:
    """The project and the Python environment whose docs the installed docs index."""
    from codeweaver.sources.installed_docs.project import describe, find_project_for

    return describe(find_project_for(settings), settings.docs_index_dir)


def _docs_index(built: dict[str, Any]) -> str | None:
    """Whether the installed docs' index fits the installation and what it lacks."""
    docs = built.get("installed_docs")
    if docs is None or not hasattr(docs, "freshness") or not docs.status().usable:
        return None
    try:
        line: str = docs.freshness()
    except Exception as exc:  # doctor reports, never fails
        return f"cannot tell: {exc}"
    return line


def _python_docs_state(settings: Settings, state: str) -> str:
    """The python_docs row, with the way to get the docs without root when they are missing
    (the source's own hint names the distribution's package, which needs root)."""
    from codeweaver.sources.python_docs.fetch import missing_tools

    if not state.startswith("skipped") or settings.python_docs is not None:
        return state
    if lacking := missing_tools():
        return f"{state}; no {', '.join(lacking)} here to fetch them without root"
    return f"{state}; or, without root, `codeweaver setup` downloads them into the cache"


def collect_report(settings: Settings) -> dict[str, Any]:
    """A JSON-serialisable description of the model, sources, stores and keys."""
    from codeweaver.agent.search_nodes import SEARCH_NODES
    from codeweaver.factory import build_sources
    from codeweaver.sources.base import source_names
    from codeweaver.sources.keys import key_status

    built = build_sources(settings)
    sources = {
        name: str(built[name].status())
        if name in built
        else "skipped: disabled by CODEWEAVER_SOURCES"
        for name in source_names()
    }
    if "python_docs" in built:
        sources["python_docs"] = _python_docs_state(settings, sources["python_docs"])
    return {
        "model": _model_report(settings),
        "sources": sources,
        "docs_index": _docs_index(built),
        "search_nodes": {name: list(row.sources) for name, row in SEARCH_NODES.items()},
        "plugins": _plugin_failures(),
        "project": _project_report(settings),
        "stores": _stores(settings),
        "keys": key_status(settings),
        "response_language": settings.response_language or "the question's language",
    }


def _safe(value: object) -> str:
    return terminal_safe(str(value), single_line=True)


def render_report(console: Console, report: dict[str, Any]) -> None:
    model = report["model"]
    # States and paths can hold file names and server text: printed as plain, safe text.
    console.print(Text("model  ", style="bold") + Text(_safe(model["model"])))
    for key in ("provider", "status", "server", "weights", "runtime"):
        if key in model:
            console.print(Text(f"  {key}: {_safe(model[key])}"), highlight=False)
    for alias, status in model.get("other_local_models", {}).items():
        console.print(Text(f"  local:{_safe(alias)}: {_safe(status)}"), highlight=False)

    table = Table("source", "state", title="sources", title_justify="left")
    for name, state in report["sources"].items():
        style = "green" if state == "ready" else "yellow"
        table.add_row(Text(_safe(name)), Text(_safe(state), style=style))
    console.print(table)
    if report.get("docs_index"):
        line = report["docs_index"]
        style = "green" if line.startswith("ready") else "yellow"
        console.print(Text("  installed_docs index: ") + Text(_safe(line), style=style))
    for plugin, why in report.get("plugins", {}).items():
        line = f"plugin {_safe(plugin)} failed to load: {_safe(why)}"
        console.print(Text(line, style="bold red"), highlight=False)

    _render_project(console, report.get("project"))
    console.print("[bold]stores[/]")
    for name, where in report["stores"].items():
        console.print(Text(f"  {_safe(name)}: {_safe(where)}"), highlight=False)
    keys = report["keys"]
    console.print("[bold]keys[/] (set / not set, values never shown)")
    for name, present in keys.items():
        console.print(f"  {name}: {'set' if present else 'not set'}")


def _render_project(console: Console, project: dict[str, Any] | None) -> None:
    """Project root and environment; paths and reasons are outside text, printed inert."""
    if not project:
        return
    console.print(Text("project  ", style="bold") + Text(_safe(project.get("root", ""))))
    count = _safe(project.get("distributions", 0))
    facts = f"Python {_safe(project.get('python_version', ''))}, {count} distributions"
    python, how = _safe(project.get("python", "")), _safe(project.get("found_by", ""))
    if project.get("environment") == "project":
        line = f"  environment: {python} (found by {how}), {facts}"
    elif "found_by" in project:
        line = f"  environment: {python} (found by {how}), CodeWeaver's own, {facts}"
    else:
        reason = _safe(project.get("reason", ""))
        console.print(Text(f"  no project environment: {reason}"), highlight=False)
        line = f"  using CodeWeaver's own environment: {python}, {facts}"
    console.print(Text(line), highlight=False)
    if project.get("index"):
        console.print(Text(f"  docs index: {_safe(project['index'])}"), highlight=False)


def collect_live(settings: Settings) -> list[ProbeReport]:
    """One real search per online source (`doctor --live`); the only doctor check with I/O."""
    from codeweaver.sources.probe import probe_sources

    return asyncio.run(probe_sources(settings))


def live_json(reports: list[ProbeReport]) -> list[dict[str, Any]]:
    return [
        {**r.to_dict(), "latency": None if r.latency is None else round(r.latency, 3)}
        for r in reports
    ]


_RESULT_STYLES = {
    "ok": "green",
    "failed": "bold red",
    "not configured": "yellow",
    "disabled": "dim",
}


def render_live(console: Console, reports: list[ProbeReport]) -> None:
    """The live checks as a table; server text goes in as `Text`, never parsed as markup."""
    table = Table(
        "source",
        "result",
        Column("latency", justify="right"),
        Column("results", justify="right"),
        "quota left",
        "reason",
        title="online sources (one live search each)",
        title_justify="left",
    )
    for report in reports:
        style = _RESULT_STYLES[report.result]
        if report.ok and not report.results:
            style = "yellow"  # answered, but a query that always has results found none
        table.add_row(
            Text(report.source),
            Text(report.result, style=style),
            Text("" if report.latency is None else f"{report.latency:.2f}s"),
            Text("" if report.results is None else str(report.results)),
            Text(report.quota_left or ""),
            Text(_safe(report.reason)),
        )
    console.print(table)
    failed = [r.source for r in reports if r.failed]
    if failed:
        console.print(Text(f"failed: {', '.join(failed)}", style="bold red"))
    elif not any(r.ok for r in reports):
        console.print(Text("no online source is configured", style="yellow"))
