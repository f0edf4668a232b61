"""generate_answer, combine_answers, and what both modes share: writing the answer
(`write_answer`) and the update that ends a turn (`finish`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage

from codeweaver.agent import prompts
from codeweaver.agent.answering.api_citations import cite_used_apis, cited_by_name
from codeweaver.agent.answering.citations import renumber_citations, tidy_answer
from codeweaver.agent.answering.code_citations import cite_copied_code
from codeweaver.agent.answering.evidence import (
    LEAD_IN_TOKENS,
    answer_as_written,
    close_question,
    lead_budget,
    lead_in,
    prompt_texts,
    same_question,
)
from codeweaver.agent.answering.translation import translate_shown
from codeweaver.agent.answering.versions import dated_title, installed_versions, names_in
from codeweaver.agent.deps import Deps
from codeweaver.agent.state import GraphState, MultiAnswer, SearchResult
from codeweaver.agent.steps import announce, step
from codeweaver.agent.user_text import say
from codeweaver.llm.scripts import in_language_kwargs
from codeweaver.llm.structured import message_text
from codeweaver.words.language import is_english

logger = logging.getLogger(__name__)

EMPTY_ANSWER = "the model returned an empty answer"


def finish(
    state: GraphState, node: str, answer: str, sources: list[SearchResult], note: str
) -> dict[str, Any]:
    """The update that ends a turn: history for a thread, `multi_answers` for a worker."""
    update: dict[str, Any] = {
        "answer": answer,
        "sources": sources,
        "intermediate_steps": [step(node, "observe", note, sources=len(sources))],
    }
    if state.get("is_worker"):
        item: MultiAnswer = {
            "index": state.get("worker_index", 0),
            "question": state["question"],
            "answer": answer,
            "sources": sources,
            "cache_key": state.get("canonical_question", ""),
        }
        update["multi_answers"] = [item]
    else:
        update["messages"] = [AIMessage(answer)]
    return update


def _fallback_answer(language: str, reason: str, sources: list[SearchResult]) -> str:
    listing = "\n".join(f"- [{i}] {s['title']}" for i, s in enumerate(sources, 1))
    head = say("not_written", language, reason=reason)
    tail = f"\n\n{say('sources_found', language, listing=listing)}" if sources else ""
    return head + tail


async def write_answer(
    llm: BaseChatModel,
    messages: list[BaseMessage],
    sources: list[SearchResult],
    language: str,
    question: str,
    max_tokens: int | None = None,
) -> tuple[str, str]:
    """The model's answer to `messages`, tidied against `sources`, and "" — or "" and why
    no answer was written. Never raises: the caller still has the sources to give."""
    try:
        steer = in_language_kwargs(llm, language, question)
        if max_tokens:
            steer["max_tokens"] = max_tokens
        answer = tidy_answer(message_text(await llm.ainvoke(messages, **steer)), sources)
    except Exception as exc:  # a failing model must not end the turn without a reply
        logger.warning("answer generation failed: %s", exc)
        return "", f"{type(exc).__name__}: {exc}"
    return (answer, "") if answer else ("", EMPTY_ANSWER)


@dataclass(frozen=True)
class AnswerPlan:
    """What the draft is written from: the prompt (none when the answer is a translation),
    the source's answer to give as written ("" for none), its link when it was cut, and the
    language the draft is written in when it is not the answer's ("" for the same)."""

    messages: list[BaseMessage]
    as_written: str = ""
    cut_url: str = ""
    draft_language: str = ""


def _answer_plan(
    state: GraphState, deps: Deps, sources: list[SearchResult], named: list[tuple[str, str]]
) -> AnswerPlan:
    """The closest source is shown whole (within the budget), the others summarised. When it
    answers this very question, an English reader gets its answer as written after the
    model's lead-in. A reader in another language gets the answer to the closest question
    translated; else a draft written in English from the English sources, translated once
    it is checked."""
    question, language = state["question"], state.get("language", "en")
    code_feedback = state.get("code_feedback")
    if not sources:
        return AnswerPlan(prompts.alone_messages(question, language, code_feedback))
    settings = deps.settings
    whole = lead_budget(settings.answer_source_tokens, settings.llm_context, settings.max_tokens)
    if language == "en" or not whole:
        return _plan_in(state, question, language, sources, named, whole)
    # "The closest question" compares English words: a question in another language by the
    # English form it was searched with.
    english = state.get("canonical_question") or ""
    if close_question(english, sources[0]):
        quote, cut = answer_as_written(sources[0])
        return AnswerPlan([], quote, sources[0]["url"] if cut else "")
    if english and is_english(english):
        # Written in Korean from English sources, the small model's answers were 3 of 20
        # acceptable: it writes in English, where the check reads it, and is translated.
        plan = _plan_in(state, english, "en", sources, named, whole)
        return AnswerPlan(plan.messages, plan.as_written, plan.cut_url, draft_language="en")
    # With a whole English source, 5 of the first 9 Korean StackEval questions were answered
    # mostly in English: without an English form, the summaries, the code whole.
    return _plan_in(state, question, language, sources, named, 0)


def _plan_in(
    state: GraphState,
    question: str,
    language: str,
    sources: list[SearchResult],
    named: list[tuple[str, str]],
    budget: int,
) -> AnswerPlan:
    """The prompt for `question` answered in `language`, the closest source within `budget`."""
    feedback, code_feedback = state.get("answer_feedback"), state.get("code_feedback")
    query = " ".join(dict.fromkeys(filter(None, [question, state.get("canonical_question")])))
    texts = prompt_texts(sources, query, budget)
    numbered = [
        (n, dated_title(s, named), text)
        for n, (s, text) in enumerate(zip(sources, texts, strict=True), 1)
    ]
    if budget and same_question(question, sources[0]):
        quote, cut = answer_as_written(sources[0])
        lead = prompts.source_led_messages(question, language, numbered[0], feedback, named)
        return AnswerPlan(lead, quote, sources[0]["url"] if cut else "")
    intent = state.get("intent", "learning")
    return AnswerPlan(
        prompts.answer_messages(
            question, language, intent, numbered, feedback, named, code_feedback, budget > 0
        )
    )


async def generate_answer(state: GraphState, deps: Deps) -> dict[str, Any]:
    """A draft from the search's results (or the model alone), with the check's feedback.

    Every draft reads `filtered_results` whole; the sources it is numbered against, and
    the API pages it cites after them, go to `cited_sources` for the check.
    """
    found = state.get("filtered_results") or []
    # API documentation is cited where the answer uses the API, never put in the prompt.
    sources = [s for s in found if not cited_by_name(s)]
    by_name = [s for s in found if cited_by_name(s)]
    question = state["question"]
    language = state.get("language", "en")
    # The installed versions of the libraries the question names: the answer says which
    # version it applies to, and a Stack Overflow answer for an older major shows its date.
    named = names_in(question, installed_versions(deps.sources.values()))
    plan = _answer_plan(state, deps, sources, named)
    attempt = int(state.get("answer_attempt") or 0) + 1
    if not plan.messages:
        return await _translated(state, deps, sources, plan, attempt)
    as_written = plan.as_written
    # Said when writing starts (a local model writes for tens of seconds), with the
    # number of sources the answer is written from: what its notice counts if it cites none.
    start = step(
        "generate_answer",
        "act",
        f"writing draft {attempt} from {len(sources)} sources",
        attempt=attempt,
        sources=len(sources),
    )
    announce(state, start)
    limit = LEAD_IN_TOKENS if as_written else None
    answer, reason = await write_answer(deps.llm, plan.messages, sources, language, question, limit)
    if as_written and not reason:
        answer = lead_in(answer) or answer
    if reason:
        return {
            "answer": _fallback_answer(language, reason, sources),
            "quoted_answer": "",
            "draft_language": "",
            "cited_sources": found,  # no draft to cite from: all it was given
            "answer_failed": True,
            "answer_attempt": attempt,
            "intermediate_steps": [start, step("generate_answer", "error", reason)],
        }
    quote = ""
    if as_written:
        quote = f"{say('as_written', language, n=1)}\n\n{as_written}{_cut_note(plan, language)}"
    answer, _ = cite_copied_code(answer, sources)
    # The page of an API the code calls is cited where prose names it, else on the
    # paragraph that introduces that code (a tutorial-led answer may never say "open").
    answer, used = cite_used_apis(answer, by_name, len(sources) + 1, intro=True)
    note = f"draft {attempt} written with {len(sources)} sources"
    if by_name:
        note += f", citing {len(used)} of {len(by_name)} API pages its code uses"
    return {
        "answer": answer,
        "quoted_answer": quote,
        "draft_language": plan.draft_language,
        "cited_sources": [*sources, *used],
        "answer_failed": False,
        "answer_attempt": attempt,
        "intermediate_steps": [start, step("generate_answer", "observe", note, attempt=attempt)],
    }


def _cut_note(plan: AnswerPlan, language: str) -> str:
    return f"\n\n{say('as_written_cut', language, url=plan.cut_url)}" if plan.cut_url else ""


async def _translated(
    state: GraphState, deps: Deps, sources: list[SearchResult], plan: AnswerPlan, attempt: int
) -> dict[str, Any]:
    """The answer to this very question, found in English, translated for the reader: its
    prose paragraph by paragraph, its code as written. The model writes no draft of its
    own, so there is nothing to send back: the check reads the line that introduces it."""
    language = state.get("language", "en")
    text, steps = await translate_shown(
        deps.llm, plan.as_written, state, "generate_answer", "answer [1]", attempt=attempt
    )
    return {
        "answer": say("translated", language, n=1, title=" ".join(sources[0]["title"].split())),
        "quoted_answer": text + _cut_note(plan, language),
        "draft_language": "",
        "cited_sources": sources,
        "answer_failed": False,
        "answer_attempt": attempt,
        "intermediate_steps": steps,
    }


async def combine_answers(state: GraphState, deps: Deps) -> dict[str, Any]:
    """The two workers' answers as one, numbered sections with renumbered citations."""
    answers = sorted(state.get("multi_answers") or [], key=lambda a: a["index"])
    sections: list[str] = []
    sources: list[SearchResult] = []
    findings: list[dict[str, Any]] = []
    for position, item in enumerate(answers, 1):
        body = renumber_citations(item["answer"], len(sources))
        sources.extend(item["sources"])
        sections.append(f"## {position}. {item['question']}\n\n{body}")
        findings += [{**f, "section": position} for f in item.get("code_findings") or ()]
    original = state["question"].strip()
    answer = f"> {original}\n\n" + "\n\n---\n\n".join(sections)
    return {
        "answer": answer,
        "sources": sources,
        "messages": [AIMessage(answer)],
        "code_findings": findings,
        "intermediate_steps": [
            step("combine_answers", "observe", f"combined {len(answers)} answers")
        ],
    }
