"""What the graph's nodes need from outside: the model, sources, cache and settings."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from codeweaver.agent.search_nodes import FALLBACK_NODE, MIN_DOCUMENTS, SEARCH_NODES
from codeweaver.codecheck import CodeChecker
from codeweaver.config import Settings
from codeweaver.memory.cache import AnswerCache, NullCache
from codeweaver.sources.base import Source
from codeweaver.vocabulary import Intent


@dataclass(frozen=True)
class PlannedSearch:
    """One search node for one question: the source that runs it, or why it is skipped."""

    node: str
    source: str | None
    limit: int
    skip_reason: str = ""


@dataclass
class Deps:
    llm: BaseChatModel
    settings: Settings
    sources: dict[str, Source] = field(default_factory=dict)
    cache: AnswerCache = field(default_factory=NullCache)
    model_name: str = ""
    source_timeout: float = 30.0
    # Checks the answers' code against the project's installed APIs (None: no check).
    code_checker: CodeChecker | None = None

    def source_for(self, node: str) -> tuple[Source | None, str]:
        """The source that serves a search node, or None and why none can."""
        reasons: list[str] = []
        row = SEARCH_NODES.get(node)
        for name in row.sources if row else ():
            source = self.sources.get(name)
            if source is None:
                # Left out on purpose (CODEWEAVER_SOURCES) is not the same as missing.
                why = "disabled" if not self.settings.source_enabled(name) else "not configured"
                reasons.append(f"{name}: {why}")
                continue
            status = source.status()
            if status.usable:
                return source, ""
            reasons.append(f"{name}: {status.reason or status.state}")
        return None, "; ".join(reasons) or "no source configured"

    async def asource_for(self, node: str) -> tuple[Source | None, str]:
        """`source_for` off the event loop: a source's status may touch the disk (an index
        folder, the project's interpreter), which blocks an async server's loop."""
        return await asyncio.to_thread(self.source_for, node)

    def result_limit(self, node: str, intent: Intent) -> int:
        row = SEARCH_NODES.get(node)
        factor = row.share_for(intent) if row else 1.0
        return max(1, round(self.settings.results_per_source * factor)) if factor else 0

    def search_plan(self, intent: Intent) -> list[PlannedSearch]:
        """Every search node with its source and result count for this intent."""
        plan: list[PlannedSearch] = []
        for node in SEARCH_NODES:
            if node == FALLBACK_NODE:
                why = f"fallback: runs when fewer than {MIN_DOCUMENTS} documents come back"
                plan.append(PlannedSearch(node, None, 0, why))
                continue
            limit = self.result_limit(node, intent)
            if not limit:
                plan.append(PlannedSearch(node, None, 0, f"not used for {intent} questions"))
                continue
            source, why_not = self.source_for(node)
            name = source.name if source else None
            plan.append(PlannedSearch(node, name, limit, "" if source else why_not))
        return plan

    async def asearch_plan(self, intent: Intent) -> list[PlannedSearch]:
        """`search_plan` off the event loop (see `asource_for`)."""
        return await asyncio.to_thread(self.search_plan, intent)
