"""The code check of a final answer (`codecheck`) in the graph: one rewrite with the facts
the first time the answer's code uses what is not installed, then a note under its block;
and the installed documentation of what the code uses, cited. Shared by `check_answer` and
the librarian's `librarian_check` (which never asks for a rewrite).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from codeweaver.agent.answering.api_citations import cite_checked_apis, uncite_namesakes
from codeweaver.agent.deps import Deps
from codeweaver.agent.state import GraphState, SearchResult, Step
from codeweaver.agent.steps import step
from codeweaver.agent.user_text import say
from codeweaver.codecheck import BlockFinding, with_notes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CodeReview:
    """The code check's outcome for a final answer: the answer (with notes), its steps,
    the findings left, or the facts of a rewrite to ask for first."""

    answer: str
    steps: list[Step]
    findings: list[dict[str, Any]]
    rewrite: str | None = None
    apis: tuple[str, ...] = ()  # the installed APIs the code uses that exist


async def review_code(
    state: GraphState, deps: Deps, answer: str, *, rewrite: bool = True, node: str = "check_answer"
) -> CodeReview:
    """Check `answer`'s code against the installed APIs: the first time it finds
    something, ask for one rewrite with the facts (unless `rewrite` is off); after that,
    note it under its block."""
    checker = deps.code_checker
    if checker is None or state.get("answer_failed") or not answer:
        return CodeReview(answer, [], [])
    try:
        found = await asyncio.to_thread(checker.check, answer, state["question"])
    except Exception as exc:  # a check that fails never costs the answer
        logger.warning("code check failed", exc_info=True)
        return CodeReview(answer, [step(node, "error", f"code check failed: {exc}")], [])
    if not found.blocks:
        return CodeReview(answer, [], [])
    steps = [
        step(node, "observe", found.summary(),
             checked=found.uses, found=len(found.findings))
    ]  # fmt: skip
    if not found.findings:
        return CodeReview(answer, steps, [], apis=found.apis)
    if rewrite and not state.get("code_feedback"):
        names = ", ".join(item.finding.name for item in found.findings)
        steps.append(step(node, "think", f"rewriting the code without {names}",
                          retry=True))  # fmt: skip
        facts = "\n".join(f"- {item.fact()}" for item in found.findings)
        return CodeReview(answer, steps, [], rewrite=facts)
    language = state.get("language", "en")
    noted = with_notes(answer, found, lambda item: code_note(item, language))
    return CodeReview(noted, steps, [item.to_dict() for item in found.findings], apis=found.apis)


def code_note(item: BlockFinding, language: str) -> str:
    """The note under a block, in the question's language."""
    finding = item.finding
    names = ", ".join(f"`{name}`" for name in item.close)
    close = say("code_close", language, names=names) if names else ""
    if item.says:
        close += say("code_says", language, text=item.says[0])
    if finding.kind == "syntax":
        detail = finding.message.partition("(")[2].rpartition(")")[0]
        where = finding.where or "Python 3"
        return say("code_python2", language, detail=detail, where=where)
    if finding.kind == "keyword":
        target = finding.name.partition("(")[0]
        return say("code_keyword", language, name=target, keyword=finding.keyword, close=close)
    if finding.where:
        return say("code_missing", language, name=finding.name, where=finding.where, close=close)
    return say("code_missing_unversioned", language, name=finding.name, close=close)


def settle_code(
    code: CodeReview, sources: list[SearchResult], deps: Deps
) -> tuple[str, list[SearchResult]]:
    """The reviewed answer and its sources: the installed documentation of the APIs its
    code uses cited, a page cited for a namesake of a missing method dropped."""
    answer = code.answer
    if code.apis:
        answer, sources = cite_checked_apis(answer, sources, code.apis, [*deps.sources.values()])
    missing = [str(f["name"]) for f in code.findings if f.get("kind") == "missing"]
    if missing:
        answer, sources = uncite_namesakes(answer, sources, missing, code.apis)
    return answer, sources
