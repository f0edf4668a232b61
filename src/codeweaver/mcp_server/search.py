"""The `search_*` tools: which sources each asks, and asking them at once.

The tools come from what each source declares where it registers (`SourceInfo.mcp_tool`);
a tool asks its sources in the order the search nodes list them. A tool answers when at
least one of its sources does; the others are named with why (`source_status`), and a
tool error says why when none could.

A coding agent judges relevance itself, so a source that can rank without its relevance
bar (`RanksWithoutBar`: the docs sources) gives it the ranked list with scores, read
`RANKED_DEPTH` deep; `min_score` applies a bar of the caller's choosing, and what it and
`limit` left out is counted (`ResultsCut`). The answer pipeline keeps its bar: it calls
`search`, never `ranked`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from mcp.server.mcpserver.exceptions import ToolError

from codeweaver.agent.search_nodes import SEARCH_NODES
from codeweaver.mcp_server.arguments import MAX_LIMIT
from codeweaver.mcp_server.render import one_line, result_score
from codeweaver.mcp_server.structured import IndexState, ResultsCut, SourceProblem
from codeweaver.sources.base import McpTool, Source, SourceStatus, source_info, source_infos
from codeweaver.sources.calling import Failed, Found, search_safely
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

#: How deep a source that ranks without a bar is read: past the largest `limit`, so a
#: reply can say how many more results the limit left out.
RANKED_DEPTH = 2 * MAX_LIMIT


@runtime_checkable
class RanksWithoutBar(Source, Protocol):
    """A source whose `search` keeps a relevance bar for the answer pipeline and that can
    also give its ranked list without it, for a caller that judges relevance itself."""

    async def ranked(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        """Up to `limit` results in the ranking's order, with their scores, whatever those are."""
        ...


@runtime_checkable
class DescribesIndex(Protocol):
    """A source that searches an index it built."""

    def describe_index(self) -> tuple[datetime, str] | None:
        """When the loaded index was built and what it holds, in words (whose docs, which
        versions); None before it is loaded. Never builds it (a small file read at most)."""
        ...


class _Unbarred:
    """A source whose `search` is its ranked list without the bar, so that call too goes
    through `search_safely` (the deadline, failures read one way, tracing)."""

    def __init__(self, source: RanksWithoutBar) -> None:
        self.name = source.name
        self._source = source

    def status(self) -> SourceStatus:
        return self._source.status()

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        return await self._source.ranked(query, intent, limit)


@dataclass(frozen=True)
class SearchToolRow:
    """One `search_*` tool and the sources it asks, in order."""

    tool: McpTool
    sources: tuple[str, ...]


def search_tools() -> dict[str, SearchToolRow]:
    """Every search tool a registered source declares, with the sources that name it."""
    infos = source_infos()
    in_nodes = [name for row in SEARCH_NODES.values() for name in row.sources if name in infos]
    ordered = [*dict.fromkeys(in_nodes), *(name for name in infos if name not in in_nodes)]
    declared: dict[str, McpTool] = {}
    for name in ordered:
        tool = infos[name].mcp_tool
        if isinstance(tool, McpTool):
            declared.setdefault(tool.name, tool)
    members: dict[str, list[str]] = {}
    for name in ordered:
        tool_name = infos[name].mcp_tool_name
        if tool_name is None:
            continue
        if tool_name not in declared:
            logger.warning("source %r names MCP tool %r, which no source declares", name, tool_name)
            continue
        members.setdefault(tool_name, []).append(name)
    return {
        name: SearchToolRow(declared[name], tuple(sources)) for name, sources in members.items()
    }


def reaches_network(names: Iterable[str]) -> bool:
    """Whether searching `names` may reach the network (the tool's `openWorldHint`): a
    source reaches it unless it says it is offline (plugins without a word included)."""
    return any(not source_info(name).offline for name in names)


@dataclass
class Searched:
    """What a search found, which of the sources asked could not answer, what was left
    out, and how fresh the indexes searched are."""

    results: list[SearchResult] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)
    cuts: list[ResultsCut] = field(default_factory=list)
    indexes: list[IndexState] = field(default_factory=list)

    def notes(self) -> list[str]:
        return [f"{p.source}: {p.reason}" for p in self.problems]


async def search_sources(
    sources: Mapping[str, Source],
    names: Sequence[str],
    query: str,
    intent: Intent,
    limit: int,
    timeout: float,
    min_score: float | None = None,
) -> Searched:
    """Search the usable ones of `names` at once; a tool error when none could answer.
    `min_score`: only results scoring at least this (None: the ranked list, no bar)."""
    found = Searched()
    absent: list[str] = []
    usable: list[Source] = []
    for name in names:
        source = sources.get(name)
        if source is None:
            # Not a problem to report when another source answers: a tool asks some
            # sources only where they are configured.
            absent.append(f"{name}: not enabled (CODEWEAVER_SOURCES)")
            continue
        status = source.status()
        if status.usable:
            usable.append(source)
        else:
            found.problems.append(SourceProblem(
                source=name, state="skipped", reason=one_line(status.reason or status.state, 300)
            ))  # fmt: skip
    depths = [RANKED_DEPTH if isinstance(s, RanksWithoutBar) else limit for s in usable]
    answers = await asyncio.gather(
        *(
            search_safely(_unbarred(s), query, intent, depth, timeout=timeout)
            for s, depth in zip(usable, depths, strict=True)
        )
    )
    answered = 0
    for answer, depth in zip(answers, depths, strict=True):
        if isinstance(answer, Failed):
            found.problems.append(SourceProblem(
                source=one_line(answer.source, 60),
                state="timeout" if answer.kind == "timeout" else "failed",
                reason=one_line(answer.reason, 300),
            ))  # fmt: skip
        else:
            answered += 1
            shown, cut = cut_results(answer, limit, depth, min_score)
            found.results.extend(shown)
            found.cuts.extend([cut] if cut is not None else [])
    if answered == 0:
        raise ToolError("; ".join([*found.notes(), *absent]) or "no source to search")
    # Off the event loop: a source may read a small file to say how its build is going.
    found.indexes = await asyncio.to_thread(index_states, usable, datetime.now(UTC))
    return found


def _unbarred(source: Source) -> Source:
    return _Unbarred(source) if isinstance(source, RanksWithoutBar) else source


def cut_results(
    answer: Found, limit: int, depth: int, min_score: float | None
) -> tuple[list[SearchResult], ResultsCut | None]:
    """The results of one source to show (those passing `min_score`, then `limit` of
    them; it was asked for `depth`), and what was left out (None: nothing)."""
    passing: list[SearchResult] = []
    below: list[float] = []
    for result in answer.results:
        score = result_score(result)
        if min_score is None or (score is not None and score >= min_score):
            passing.append(result)
        else:  # a result without a score cannot show that it passes
            below.append(-1.0 if score is None else score)
    beyond = max(len(passing) - limit, 0)
    if not below and not beyond:
        return passing, None
    best = max(below) if below else -1.0
    cut = ResultsCut(
        source=one_line(answer.source, 60),
        below_min_score=len(below),
        best_below=best if best >= 0 else None,
        beyond_limit=beyond,
        more_unread=len(answer.results) >= depth,
    )
    return passing[:limit], cut


def index_states(sources: Iterable[Source], now: datetime) -> list[IndexState]:
    return [state for source in sources if (state := index_state(source, now)) is not None]


def index_state(source: Source, now: datetime) -> IndexState | None:
    """How fresh the index `source` searched is, or None for a source that keeps none."""
    if not isinstance(source, DescribesIndex):
        return None
    described = source.describe_index()
    if described is None:
        return None
    built, holds = described
    if built.tzinfo is None:  # the indexes record UTC; an older manifest may lack the zone
        built = built.replace(tzinfo=UTC)
    return IndexState(
        source=one_line(source.name, 60),
        built_at=built.astimezone(UTC).isoformat(timespec="seconds"),
        age_seconds=max(int((now - built).total_seconds()), 0),
        holds=one_line(holds, 300),
    )
