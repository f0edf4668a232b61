"""The systems `eval answers` compares: the pipeline and the bare model it runs on.

Both answer with one shared chat model, so they differ only in what the pipeline adds
around it; the `UsageMeter` attached to that model counts every call of either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from codeweaver.agent import prompts
from codeweaver.agent.citations import CITATION
from codeweaver.agent.runner import RunResult
from codeweaver.config import Settings
from codeweaver.evaluation.answers_eval import Answer, Answered, Judge
from codeweaver.factory import build_deps, open_assistant, prepare_sources
from codeweaver.llm.structured import ainvoke_structured, message_text

# How the grounding check marks an answer it could not make agree with its sources.
WARNING_MARK = "**Warning:**"


def pipeline_answered(result: RunResult) -> Answered:
    """What the pipeline's steps tell about one answer."""
    steps = result.steps
    drafts = sum(
        1 for s in steps if s.get("node") == "generate_answer" and s.get("kind") != "think"
    )
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
    )


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
    return {"model": settings.model, "grounding": settings.grounding_check, **(extra or {})}
