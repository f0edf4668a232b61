"""The `search_*` tools: which sources each asks, and asking them at once.

A tool answers when at least one of its sources does; the others are named with why
(`source_status`), and a tool error says why when none could.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp.server.mcpserver.exceptions import ToolError

from codeweaver.mcp_server.render import one_line
from codeweaver.mcp_server.structured import SourceProblem
from codeweaver.sources.base import Source, SourceError
from codeweaver.vocabulary import Intent, SearchResult

logger = logging.getLogger(__name__)

# Which sources each search tool asks, and the intent it searches them with.
SEARCH_TOOLS: dict[str, tuple[tuple[str, ...], Intent]] = {
    "search_docs": (("installed_docs", "python_docs", "npm_docs"), "learning"),
    "search_stackoverflow": (("stackoverflow",), "debugging"),
    "search_github": (("github", "github_issues"), "debugging"),
    "search_code": (("local_code",), "learning"),
    "search_knowledge_base": (("knowledge_base",), "learning"),
}
# The sources that search this machine only (their classes say `offline = True`); every
# other one, plugins included, is taken to reach the network.
LOCAL_SOURCES = frozenset(
    {"installed_docs", "python_docs", "npm_docs", "local_code", "knowledge_base"}
)


def reaches_network(names: Iterable[str]) -> bool:
    """Whether searching `names` may reach the network (the tool's `openWorldHint`)."""
    return any(name not in LOCAL_SOURCES for name in names)


@dataclass
class Found:
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
) -> Found:
    """Search the usable ones of `names` at once; a tool error when none could answer."""
    found = Found()
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
    answers = await asyncio.gather(*(_search_one(s, query, intent, limit, timeout) for s in usable))
    answered = 0
    for answer in answers:
        if isinstance(answer, SourceProblem):
            found.problems.append(answer)
        else:
            answered += 1
            found.results.extend(answer)
    if answered == 0:
        raise ToolError("; ".join([*found.notes(), *absent]) or "no source to search")
    return found


async def _search_one(
    source: Source, query: str, intent: Intent, limit: int, timeout: float
) -> list[SearchResult] | SourceProblem:
    """The results, or why there are none."""
    name = one_line(source.name, 60)
    try:
        return await asyncio.wait_for(source.search(query, intent, limit), timeout)
    except SourceError as exc:
        return SourceProblem(source=name, state="failed", reason=one_line(exc, 300))
    except TimeoutError:
        return SourceProblem(
            source=name, state="timeout", reason=f"no answer within {timeout:.0f} s"
        )
    except Exception as exc:  # a broken source must not take the server down
        logger.exception("source %s failed", source.name)
        return SourceProblem(source=name, state="failed", reason=f"failed ({type(exc).__name__})")
