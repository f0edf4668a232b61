"""check_answer: the grounding check after generation, with one bounded rewrite.

Citations the sources do not support are removed from the answer (the sentences stay)
and the steps say which and why: that costs no model call. Only a cited claim that
contradicts its source (or an answer off the question) goes back to `generate_answer`
as feedback, at most `grounding_retries` times; a contradiction left after that is
returned in the best draft with a visible warning listing it, never silently, and is
not cached. Everything else ends the turn and is cached.

`grade` is the check itself, shared with the librarian's `librarian_check`; the answer's
code is checked by `code_review` before the turn ends.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel

from codeweaver.agent.answering.citations import with_source_notice
from codeweaver.agent.answering.grounding import GroundingReport, check_grounding, warning
from codeweaver.agent.answering.translation import translate_shown
from codeweaver.agent.deps import Deps
from codeweaver.agent.nodes.answer import finish
from codeweaver.agent.nodes.code_review import review_code, settle_code
from codeweaver.agent.state import (
    BestDraft,
    GraphState,
    GroundingDetails,
    SearchResult,
    Step,
    is_reset,
)
from codeweaver.agent.steps import step

logger = logging.getLogger(__name__)


def grounding_reader(deps: Deps) -> BaseChatModel | None:
    """The model that settles what words cannot, or None to let such claims pass.

    Across languages words compare nothing, so with the words judge (the default) the
    cited claims of an answer in another language than its sources all pass: on the
    embedded 1.5B model a reader's call cost seconds per answer and its verdicts flagged
    half of the sound answers it read, so it is asked only when configured.
    """
    return deps.llm if deps.settings.grounding_judge == "model" else None


@dataclass(frozen=True)
class Grade:
    """One grounding check: the answer without the citations its sources do not
    support, the report, and the steps that tell the user so."""

    answer: str
    report: GroundingReport
    steps: list[Step]

    @property
    def details(self) -> GroundingDetails:
        """The report as the state and the steps carry it."""
        # The report's dict is what `GroundingDetails` declares; a test holds them equal.
        return cast(GroundingDetails, self.report.to_dict())


async def grade(
    deps: Deps,
    state: GraphState,
    node: str,
    answer: str,
    sources: list[SearchResult],
    *,
    explain_removals: bool = True,
) -> Grade:
    """Check `answer` against `sources` as `node`: by words in English, by the reader
    model where configured. `explain_removals` adds a step per removed citation."""
    # A draft written in English for a reader in another language is read as written.
    language = state.get("draft_language") or state.get("language", "en")
    report = await check_grounding(
        grounding_reader(deps), state["question"], answer, sources, by_words=language == "en"
    )
    steps = [step(node, "observe", report.summary(), **report.to_dict())]
    if explain_removals:
        steps += _removal_steps(node, report)
    if report.model_problem:
        steps.append(step(node, "error", f"claim check fell back: {report.model_problem}"))
    return Grade(report.cleaned(answer, len(sources)), report, steps)


async def check_answer(state: GraphState, deps: Deps) -> dict[str, Any]:
    """Grade the draft: end the turn, or send it back once with what contradicts (its
    cited claims) or, before it ends, once with what its code uses that does not exist."""
    answer = state.get("answer", "")
    sources = state.get("cited_sources") or []
    if state.get("answer_failed") or not deps.settings.grounding or not sources:
        why = "generation failed" if state.get("answer_failed") else "nothing to check against"
        if not deps.settings.grounding:
            why = "grounding check off"
        # Unchecked by choice (or with no sources) caches as before; a failed draft never.
        cache = not state.get("answer_failed")
        update = await _final(state, deps, answer, sources, f"not checked: {why}", cache=cache)
        update["answer_feedback"] = None
        return update
    graded = await grade(deps, state, "check_answer", answer, sources)
    report, steps, details = graded.report, graded.steps, graded.details
    if state.get("quoted_answer"):
        answer = report.cleaned(supported_lead_in(answer, report), len(sources))
    else:
        answer = graded.answer
    attempt = int(state.get("answer_attempt") or 1)
    if report.passed:
        update = await _final(state, deps, answer, sources, "answer checked", cache=True)
        update["intermediate_steps"] = steps + update["intermediate_steps"]
        return {**update, "answer_feedback": None, "grounding": details}
    draft: BestDraft = {
        "answer": answer,
        "rank": list(report.rank()),
        "warning": warning(report, state.get("language", "en")),
    }
    best = state.get("best_answer") or draft
    if tuple(draft["rank"]) < tuple(best["rank"]):
        best = draft
    if attempt <= deps.settings.grounding_retries:
        why = "; ".join(f'"{_short(v.claim.plain)}": {v.reason}' for v in report.contradictions)
        steps.append(
            step(
                "check_answer",
                "think",
                f"rewriting the answer ({attempt + 1} of {deps.settings.grounding_retries + 1})"
                + (f": {why}" if why else f": {report.grade_reason}"),
                retry=True,
            )
        )
        return {
            "answer_feedback": report.feedback(),
            "best_answer": best,
            "grounding": details,
            "intermediate_steps": steps,
        }
    final = f"{best['answer']}\n\n{best['warning']}"
    update = await _final(state, deps, final, sources, "answered with a warning")
    update["intermediate_steps"] = steps + update["intermediate_steps"]
    return {**update, "answer_feedback": None, "best_answer": best, "grounding": details}


def supported_lead_in(answer: str, report: GroundingReport) -> str:
    """A lead-in before a quoted answer without the sentences its source does not support.

    Left uncited, such a sentence still reads as the quote's summary: blind readers found
    lead-ins that blur or contradict the answer below them ("portable across OSes",
    `exec()` said to start a child process). The quote says it better; the sentence goes.
    """
    for verdict in report.removed:
        answer = answer.replace(verdict.claim.text, " ")
    return " ".join(answer.split())


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _removal_steps(node: str, report: GroundingReport) -> list[Step]:
    """One step per removed citation: which sentence lost which marker, and why."""
    found: list[Step] = []
    for verdict in report.removed:
        marks = "".join(f"[{n}]" for n in verdict.claim.citations)
        found.append(
            step(
                node,
                "observe",
                f'removed citation {marks} from "{_short(verdict.claim.plain)}": '
                f"{verdict.reason}; the sentence stays, uncited",
            )
        )
    if report.unknown_citations:
        marks = "".join(f"[{n}]" for n in report.unknown_citations)
        found.append(step(node, "observe", f"removed {marks}: no such source"))
    return found


async def _final(
    state: GraphState,
    deps: Deps,
    answer: str,
    sources: list[SearchResult],
    note: str,
    cache: bool = False,
) -> dict[str, Any]:
    """End the turn with `answer`, once its code is checked; a checked answer is also
    cached. Or, when its code uses what is not installed, ask for one rewrite first.

    A source's answer quoted as written goes after the checked lead-in; what its code uses
    that is not installed is noted under its block, never sent back (the model did not
    write it)."""
    quote = state.get("quoted_answer") or ""
    if quote:
        answer = f"{answer}\n\n{quote}" if answer.strip() else quote
    code = await review_code(state, deps, answer, rewrite=not quote)
    if code.rewrite is not None:
        return {"code_feedback": code.rewrite, "code_retry": True,
                "intermediate_steps": code.steps}  # fmt: skip
    answer, sources = settle_code(code, sources, deps)
    update_steps = list(code.steps)
    language = state.get("language", "en")
    if state.get("draft_language") not in (None, "", language) and not state.get("answer_failed"):
        answer, said = await translate_shown(deps.llm, answer, state, "check_answer", "the answer")
        update_steps += said
    if not state.get("answer_failed"):
        found = [r for r in state.get("search_results") or [] if not is_reset(r)]
        answer = with_source_notice(answer, len(sources), found, state.get("language", "en"))
    if code.findings:
        # A missing API is noted, not fixed: the next ask may write better code.
        cache, note = False, f"{note}; not cached (its code uses what is not installed)"
    cacheable = (
        cache
        and deps.settings.cache_enabled
        and state.get("question_type") in ("new_topic", "independent")
        and bool(state.get("should_cache", False))
    )
    waiting = not_ready(state)
    if cacheable and waiting:
        # Written while a source's index was being made: the next ask may find more.
        cacheable, note = False, f"{note}; not cached ({', '.join(waiting)} not ready)"
    problem = None
    if cacheable:
        key = state.get("canonical_question") or state["question"]
        try:  # embedding and the vector store are blocking work: off the event loop
            await asyncio.to_thread(deps.cache.store, key, answer, sources, deps.model_name)
        except Exception as exc:  # a broken cache never costs the answer
            logger.warning("cache store failed: %s", exc)
            cacheable, problem = False, f"not cached: {exc}"
    text = f"{note}; answer written with {len(sources)} sources" + (
        " (cached)" if cacheable else ""
    )
    update = finish(state, "check_answer", answer, sources, text)
    update["intermediate_steps"] = [*update_steps, *update["intermediate_steps"]]
    update["code_findings"] = code.findings
    update["code_retry"] = False
    if update.get("multi_answers"):  # a worker: its findings go with its section
        update["multi_answers"] = [{**update["multi_answers"][0], "code_findings": code.findings}]
    if problem:
        update["intermediate_steps"].append(step("check_answer", "error", problem))
    return update


def not_ready(state: GraphState) -> list[str]:
    """The sources this turn left out because their index was still being made."""
    found = [
        (item.get("data") or {}).get("not_ready") for item in state.get("intermediate_steps") or []
    ]
    return sorted({name for name in found if isinstance(name, str)})


AfterCheck = Literal["generate_answer", "combine_answers", "__end__"]


def route_after_check(state: GraphState) -> AfterCheck:
    """Back to the answer with feedback; else to the combination (a worker) or the end."""
    if state.get("answer_feedback") or state.get("code_retry"):
        return "generate_answer"
    return "combine_answers" if state.get("is_worker") else "__end__"
