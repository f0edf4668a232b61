"""Test doubles shared by unit and integration tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codeweaver.agent.deps import Deps
from codeweaver.agent.state import Intent, SearchResult
from codeweaver.config import Settings
from codeweaver.llm.scripted import Reply, ScriptedChatModel
from codeweaver.memory.cache import AnswerCache, ExactAnswerCache
from codeweaver.sources.base import Source, SourceError, SourceStatus


class FakeSource:
    """A source returning prepared results and recording the queries it saw."""

    def __init__(
        self,
        name: str = "installed_docs",
        results: list[SearchResult] | None = None,
        *,
        error: Exception | None = None,
        delay: float = 0.0,
        per_query: dict[str, list[SearchResult]] | None = None,
    ) -> None:
        self.name = name
        self.results = results if results is not None else docs(3)
        self.error = error
        self.delay = delay
        self.per_query = per_query or {}
        self.queries: list[str] = []

    def status(self) -> SourceStatus:
        return SourceStatus("ready")

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        self.queries.append(query)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error:
            raise self.error
        return list(self.per_query.get(query, self.results))[:limit]


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def doc(n: int, score: float = 0.8, text: str | None = None) -> SearchResult:
    return {
        "title": f"doc {n}",
        "url": f"https://docs.example/{n}",
        "snippet": text
        or "Open file and return a stream. Iterate over the lines of a file with a for loop. "
        "Each line keeps its newline character.",
        "source": "installed_docs",
        "score": score,
        "reference": f"python:doc{n}@3.11",
    }


def docs(count: int, score: float = 0.8) -> list[SearchResult]:
    return [doc(i, score) for i in range(1, count + 1)]


# Python's prose docs for tests: two real pages, indexed in a blink, where the machine's
# full docs (if installed) would take half a minute per fresh cache folder.
PYTHON_DOCS_FIXTURE = Path(__file__).parent / "fixtures" / "python_docs" / "html"


def make_settings(tmp_path: Path, **overrides: object) -> Settings:
    overrides.setdefault("python_docs", PYTHON_DOCS_FIXTURE)
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", **overrides)


def make_deps(
    tmp_path: Path,
    script: dict[str, Reply],
    sources: list[Source] | None = None,
    cache: AnswerCache | None = None,
    **settings_overrides: object,
) -> tuple[Deps, ScriptedChatModel]:
    llm = ScriptedChatModel(script=script)
    settings = make_settings(tmp_path, **settings_overrides)
    chosen = sources if sources is not None else [FakeSource()]
    deps = Deps(
        llm=llm,
        settings=settings,
        sources={s.name: s for s in chosen},
        cache=cache if cache is not None else ExactAnswerCache(settings.answer_cache_path),
        model_name="scripted:test",
        source_timeout=2.0,
    )
    return deps, llm


__all__ = ["FakeClock", "FakeSource", "SourceError", "doc", "docs", "make_deps", "make_settings"]
