"""The librarian's tools: `think`, and one search tool per usable search node's source.

The registry is built from `Deps` on every use, so a source that becomes usable (or
stops being usable) mid-session is offered (or withdrawn) at the next decision. A tool
never raises: failures come back as an observation starting with `error:` and an
`error` step, and the loop goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from codeweaver.agent.deps import Deps
from codeweaver.agent.prompts import librarian as librarian_prompts
from codeweaver.agent.search_nodes import SEARCH_NODES
from codeweaver.agent.state import Intent, SearchResult, Step
from codeweaver.agent.steps import announce, step
from codeweaver.sources.base import Source
from codeweaver.sources.calling import Failed, search_safely

THINK = "think"
# The loop does not classify intent; sources weigh "learning" as the neutral case.
SEARCH_INTENT: Intent = "learning"
SNIPPET_CHARS = 160


@dataclass(frozen=True)
class Observation:
    """What a tool gives back: text for the model, steps for the user, new results."""

    text: str
    steps: list[Step]
    results: list[SearchResult] = field(default_factory=list)


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    async def run(
        self, text: str, state: Mapping[str, Any], seen: list[SearchResult]
    ) -> Observation:
        """Run with the model's input; `seen` holds this turn's results so far, numbered."""
        ...


@dataclass(frozen=True)
class ThinkTool:
    """Reasoning written down: shown to the user as a `think` step, nothing searched."""

    name: str = THINK
    description: str = librarian_prompts.LIBRARIAN_TOOL_HELP[THINK]

    async def run(
        self, text: str, state: Mapping[str, Any], seen: list[SearchResult]
    ) -> Observation:
        note = " ".join(text.split())
        if not note:
            return Observation("error: think needs your reasoning as input", [])
        return Observation("noted", [step(THINK, "think", note)])


def result_key(result: SearchResult) -> str:
    """The identity of a document across searches: its stable reference, else its URL."""
    return result.get("reference") or result.get("url") or result["title"]


def number_results(
    found: list[SearchResult], seen: list[SearchResult]
) -> tuple[list[SearchResult], list[str]]:
    """The results not seen before, and one line per result numbered as the answer cites it.

    Numbers continue this turn's list, so `[n]` in an observation is `[n]` in the answer.
    """
    numbers = {result_key(r): n for n, r in enumerate(seen, 1)}
    new: list[SearchResult] = []
    lines: list[str] = []
    shown: set[int] = set()
    for result in found:
        key = result_key(result)
        if key not in numbers:
            new.append(result)
            numbers[key] = len(seen) + len(new)
        n = numbers[key]
        if n in shown:
            continue  # the same document twice in one batch
        shown.add(n)
        snippet = " ".join(result.get("snippet", "").split())[:SNIPPET_CHARS]
        lines.append(f"[{n}] {result['title']} — {snippet}")
    return new, lines


@dataclass(frozen=True)
class SearchTool:
    """One search node's source as a tool, named after the node (`search_web`, …)."""

    name: str
    source: Source
    limit: int
    timeout: float

    @property
    def description(self) -> str:
        return SEARCH_NODES[self.name].help

    async def run(
        self, text: str, state: Mapping[str, Any], seen: list[SearchResult]
    ) -> Observation:
        query = " ".join(text.split())
        if not query:
            why = f"{self.name} needs a search query as input"
            return Observation(f"error: {why}", [step(self.name, "error", why)])
        act = step(self.name, "act", f"{self.source.name}: {query}", query=query, limit=self.limit)
        announce(state, act)  # shown while the search runs, not only when it returns
        outcome = await search_safely(
            self.source, query, SEARCH_INTENT, self.limit, timeout=self.timeout
        )
        if isinstance(outcome, Failed):  # a failing source never fails the answer
            why = outcome.text
            return Observation(f"error: {why}", [act, step(self.name, "error", why)])
        usable = [r for r in outcome.results if isinstance(r, dict) and r.get("title")]
        new, lines = number_results(usable, seen)
        note = f"{len(lines)} results from {self.source.name}" + (
            f" ({len(lines) - len(new)} seen before)" if len(new) < len(lines) else ""
        )
        observe = step(self.name, "observe", note, results=len(lines), new=len(new))
        if not lines:
            return Observation(f"no results from {self.source.name} for this query", [act, observe])
        return Observation(f"{note}:\n" + "\n".join(lines), [act, observe], new)


def build_tools(deps: Deps) -> dict[str, Tool]:
    """`think`, then a search tool per search node whose source is usable right now."""
    tools: dict[str, Tool] = {THINK: ThinkTool()}
    for node in SEARCH_NODES:
        source, _ = deps.source_for(node)
        if source is not None:
            tools[node] = SearchTool(
                node, source, deps.settings.results_per_source, deps.source_timeout
            )
    return tools


def resolve(name: str, tools: Mapping[str, Tool]) -> str | None:
    """The tool a model meant: its exact name, or a source name without `search_`."""
    for candidate in (name, f"search_{name}"):
        if candidate in tools:
            return candidate
    return None
