"""What the graph's nodes need from outside: the model, sources, cache and settings."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from codeweaver.agent.state import Step, StepKind, is_reset
from codeweaver.config import Settings
from codeweaver.memory.cache import AnswerCache, NullCache
from codeweaver.sources.base import Source

# Graph search node → candidate sources, in order of preference: the first usable one
# answers. Adding a source is a new entry here, never a branch in a node.
SEARCH_NODES: dict[str, tuple[str, ...]] = {
    "search_stackoverflow": ("stackoverflow",),
    "search_github": ("github",),
    "search_github_issues": ("github_issues",),
    "search_official_docs": ("tavily_docs", "installed_docs"),
    "search_web": ("web",),
    "search_knowledge_base": ("knowledge_base",),
    "search_local_code": ("local_code",),
}
# The node that always has an offline source (installed docs): the fan-out's fallback.
BASELINE_NODE = "search_official_docs"
# Web search is the fallback: it runs only when the fan-out found too few.
FALLBACK_NODE = "search_web"
MIN_DOCUMENTS = 3

# Results each node asks for, per intent, as a multiple of the configured base; 0 means
# the node does not run for that intent (your own code rarely answers "what is X?").
RESULT_POLICY: dict[str, dict[str, float]] = {
    "search_stackoverflow": {"debugging": 2.0, "learning": 1.0, "code_review": 1.0},
    "search_github": {"debugging": 1.0, "learning": 1.0, "code_review": 1.5},
    # Known bugs answer errors and broken upgrades; they rarely explain or review code.
    "search_github_issues": {"debugging": 1.0, "learning": 0.0, "code_review": 0.0},
    "search_official_docs": {"debugging": 1.0, "learning": 1.0, "code_review": 1.0},
    "search_knowledge_base": {"debugging": 1.0, "learning": 1.0, "code_review": 1.0},
    "search_local_code": {"debugging": 1.0, "learning": 0.0, "code_review": 1.5},
}


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

    def source_for(self, node: str) -> tuple[Source | None, str]:
        """The source that serves a search node, or None and why none can."""
        reasons: list[str] = []
        for name in SEARCH_NODES.get(node, ()):
            source = self.sources.get(name)
            if source is None:
                reasons.append(f"{name}: not configured")
                continue
            status = source.status()
            if status.usable:
                return source, ""
            reasons.append(f"{name}: {status.reason or status.state}")
        return None, "; ".join(reasons) or "no source configured"

    def result_limit(self, node: str, intent: str) -> int:
        factor = RESULT_POLICY.get(node, {}).get(intent, 1.0)
        return max(1, round(self.settings.results_per_source * factor)) if factor else 0

    def search_plan(self, intent: str) -> list[PlannedSearch]:
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


def label_steps(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Prefix a worker's steps with its question number (`Q1/…`) so progress reads well."""
    steps = update.get("intermediate_steps")
    if state.get("is_worker") and steps:
        label = f"Q{int(state.get('worker_index', 0)) + 1}/"
        update["intermediate_steps"] = [
            s if is_reset(s) or s["node"].startswith(label) else {**s, "node": label + s["node"]}
            for s in steps
        ]
    return update


def announce(state: Mapping[str, Any], item: Step) -> None:
    """Stream a step the moment it starts (e.g. a search), before the node returns.

    The node still returns the step in its update; the runner shows it once.
    """
    from langgraph.config import get_stream_writer

    labelled = label_steps(state, {"intermediate_steps": [item]})["intermediate_steps"][0]
    with contextlib.suppress(RuntimeError):  # outside a graph run (a node's unit test)
        get_stream_writer()({"step": labelled})


def step(node: str, kind: StepKind, message: str, **data: Any) -> Step:
    item: Step = {"node": node, "kind": kind, "message": message}
    if data:
        item["data"] = data
    return item
