"""The `search_*` tools: which sources each asks, and asking them at once.

The tools come from what each source declares where it registers (`SourceInfo.mcp_tool`);
a tool asks its sources in the order the search nodes list them. A tool answers when at
least one of its sources does; the others are named with why (`source_status`), and a
tool error says why when none could.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp.server.mcpserver.exceptions import ToolError

from codeweaver.agent.search_nodes import SEARCH_NODES
from codeweaver.mcp_server.render import one_line
from codeweaver.mcp_server.structured import SourceProblem
from codeweaver.sources.base import McpTool, Source, source_info, source_infos
from codeweaver.sources.calling import Failed, search_safely
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)


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
    """What a search found, and which of the sources asked could not answer."""

    results: list[SearchResult] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)

    def notes(self) -> list[str]:
        return [f"{p.source}: {p.reason}" for p in self.problems]


async def search_sources(
    sources: Mapping[str, Source],
    names: Sequence[str],
    query: str,
    intent: Intent,
    limit: int,
    timeout: float,
) -> Searched:
    """Search the usable ones of `names` at once; a tool error when none could answer."""
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
    answers = await asyncio.gather(
        *(search_safely(s, query, intent, limit, timeout=timeout) for s in usable)
    )
    answered = 0
    for answer in answers:
        if isinstance(answer, Failed):
            found.problems.append(SourceProblem(
                source=one_line(answer.source, 60),
                state="timeout" if answer.kind == "timeout" else "failed",
                reason=one_line(answer.reason, 300),
            ))  # fmt: skip
        else:
            answered += 1
            found.results.extend(answer.results)
    if answered == 0:
        raise ToolError("; ".join([*found.notes(), *absent]) or "no source to search")
    return found
