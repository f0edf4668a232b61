"""The systems `eval answers` compares: the pipeline and the bare model it runs on.

Both answer with one shared chat model, so they differ only in what the pipeline adds
around it; the `UsageMeter` attached to that model counts every call of either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from codeweaver.agent.runner import RunResult
from codeweaver.agent.state import SearchResult
from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant, prepare_sources
from codeweaver.llm.structured import ainvoke_structured, message_text
from codeweaver.sources.base import source_info, source_names
from codeweaver.words.markers import CITATION
from codeweaver_eval import prompts
from codeweaver_eval.answers_eval import Answer, Answered, Judge

if TYPE_CHECKING:
    from codeweaver_eval.stackexchange.loopback import RequestLog

# How the grounding check marks an answer it could not make agree with its sources.
WARNING_MARK = "**Warning:**"


def _ref(source: SearchResult) -> str:
    return " ".join(part for part in (source.get("reference"), source.get("url")) if part)


def pipeline_answered(result: RunResult) -> Answered:
    """What the pipeline's steps tell about one answer."""
    steps = result.steps
    # Each draft announces itself when writing starts (written or failed, one step).
    drafts = sum(1 for s in steps if s.get("node") == "generate_answer" and s.get("kind") == "act")
    cited = {int(n) for n in CITATION.findall(result.answer)}
    queries: list[str] = []
    for s in steps:
        data = s.get("data") or {}
        if str(s.get("node", "")).startswith("search_") and s.get("kind") == "act":
            queries += data.get("queries") or [data.get("query", "")]
    return Answered(
        answer=result.answer,
        drafts=drafts,
        warnings=int(WARNING_MARK in result.answer),
        plan_case=result.plan_case,
        sources=len(result.sources),
        sources_cited=len({n for n in cited if 1 <= n <= len(result.sources)}),
        search_queries=tuple(dict.fromkeys(q for q in queries if q)),
        source_refs=tuple(_ref(s) for s in result.sources),
        cited_refs=tuple(
            _ref(result.sources[n - 1]) for n in sorted(cited) if 1 <= n <= len(result.sources)
        ),
    )


def loopback_settings(settings: Settings, base_url: str) -> Settings:
    """`settings` with Stack Overflow served by the loopback at `base_url`, and every
    source that would reach another service off; the HTTP cache is off so each request
    reaches (and is logged by) the loopback."""
    # Only offline sources stay on (a run stays deterministic); Stack Overflow is the loopback.
    names = [n for n in source_names() if source_info(n).offline and settings.source_enabled(n)]
    enabled = ",".join(dict.fromkeys([*names, "stackoverflow"]))
    return settings.model_copy(
        update={"stackexchange_url": base_url, "enabled_sources": enabled, "http_cache": False}
    )


def observed(answer: Answer, loopback: RequestLog) -> Answer:
    """`answer` with what the loopback saw while it ran: posts returned, longest query.

    Questions are answered one at a time, so the requests logged meanwhile are its own.
    """

    async def answer_observed(question: str) -> Answered:
        start = len(loopback.requests)
        got = await answer(question)
        seen = loopback.requests_since(start)
        served = dict.fromkeys(f"stackoverflow:q{i}" for r in seen for i in r.question_ids)
        longest = max((r.query_chars for r in seen), default=0)
        ranks: dict[str, int] = {}
        for request in seen:
            for ref, rank in request.ranks():
                ranks[ref] = min(rank, ranks.get(ref, rank))
        return replace(
            got,
            served_refs=tuple(served),
            max_query_chars=longest,
            served_ranks=tuple(ranks.items()),
        )

    return answer_observed


@asynccontextmanager
async def pipeline_system(
    llm: BaseChatModel, settings: Settings, data_dir: Path
) -> AsyncIterator[Answer]:
    """The pipeline with the cache off, each question in a thread of its own."""
    run_settings = settings.model_copy(update={"cache_enabled": False, "data_dir": data_dir})
    deps = build_deps(run_settings, llm=llm)
    prepare_sources(deps)
    async with AsyncExitStack() as stack:
        assistant = await stack.enter_async_context(open_assistant(deps))

        async def answer(question: str) -> Answered:
            return pipeline_answered(await assistant.ask(question))

        yield answer


def bare_system(llm: BaseChatModel) -> Answer:
    """The same model, one plain system prompt, the question."""

    async def answer(question: str) -> Answered:
        reply = await llm.ainvoke(prompts.bare_messages(question))
        return Answered(message_text(reply).strip())

    return answer


class _Score(BaseModel):
    score: int = Field(ge=0, le=3)


def verdict_of(score: int) -> str:
    """StackEval's reading of a 0–3 score: 2 or more is acceptable."""
    return "acceptable" if score >= 2 else "partial" if score == 1 else "unacceptable"


def model_judge(llm: BaseChatModel) -> Judge:
    """A blind judge: it sees the question, the accepted answer and one candidate."""

    async def judge(question: str, reference: str, answer: str) -> str:
        result = await ainvoke_structured(
            llm, prompts.judge_answer_messages(question, reference, answer), _Score, _Score(score=0)
        )
        if result.fallback_reason:
            raise ValueError(f"the judge's reply was unusable: {result.fallback_reason}")
        return verdict_of(result.value.score)

    return judge


def describe(settings: Settings, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a report should say about the run's configuration."""
    return {"model": settings.model, "grounding": settings.grounding, **(extra or {})}
