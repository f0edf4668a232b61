"""What the graph's nodes need from outside: the model, sources, cache and settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from codeweaver.agent.state import Step, StepKind, is_reset
from codeweaver.config import Settings
from codeweaver.memory.cache import AnswerCache, NullCache
from codeweaver.sources.base import Source

# Graph search node → candidate sources, in order of preference: the first usable one
# answers. Adding an online source is a new entry here, never a branch in a node.
SEARCH_NODES: dict[str, tuple[str, ...]] = {
    "search_stackoverflow": ("stackoverflow",),
    "search_github": ("github",),
    "search_official_docs": ("installed_docs",),
}

# How many results each node asks for, per intent, as a multiple of the configured base.
RESULT_POLICY: dict[str, dict[str, float]] = {
    "search_stackoverflow": {"debugging": 2.0, "learning": 1.0, "code_review": 1.0},
    "search_github": {"debugging": 1.0, "learning": 1.0, "code_review": 1.5},
    "search_official_docs": {"debugging": 1.0, "learning": 1.0, "code_review": 1.0},
}


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
        return max(1, round(self.settings.results_per_source * factor))


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


def step(node: str, kind: StepKind, message: str, **data: Any) -> Step:
    item: Step = {"node": node, "kind": kind, "message": message}
    if data:
        item["data"] = data
    return item
