"""The librarian's nodes, `(state, deps)` like the pipeline's; `librarian/graph.py` wires them.

The step limit reaches `librarian_start` and `librarian_agent` as a keyword bound with
`functools.partial`, so tests can lower it per graph.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from codeweaver.agent.answering.citations import with_source_notice
from codeweaver.agent.answering.grounding import warning
from codeweaver.agent.answering.versions import dated_title, installed_versions, names_in
from codeweaver.agent.deps import Deps
from codeweaver.agent.history import history_turns
from codeweaver.agent.librarian.protocol import ANSWER, Decision
from codeweaver.agent.librarian.tools import Observation, build_tools, resolve
from codeweaver.agent.nodes.answer import finish, write_answer
from codeweaver.agent.nodes.check import grade
from codeweaver.agent.nodes.code_review import review_code, settle_code
from codeweaver.agent.prompts import librarian as librarian_prompts
from codeweaver.agent.state import GroundingDetails, LibrarianState, Step, is_reset, new_turn
from codeweaver.agent.steps import step
from codeweaver.agent.user_text import say
from codeweaver.llm.structured import ainvoke_structured
from codeweaver.words.language import answer_language

logger = logging.getLogger(__name__)

MAX_STEPS = 10  # decisions per turn, so a confused model cannot loop for ever
MAX_INVALID = 2  # unusable model replies in a row before answering with what was found
MAX_ANSWER_SOURCES = 8  # the answer prompt must fit a 4k context next to the question
SOURCE_CHARS = 400
_TO_ANSWER: dict[str, str] = {"tool": ANSWER, "input": ""}


async def librarian_start(
    state: LibrarianState, deps: Deps, *, max_steps: int = MAX_STEPS
) -> dict[str, Any]:
    """A new turn: clear what the thread's previous turn (of either mode) left."""
    question = state["question"]
    # Off the loop: whether a source can run may touch the disk (see `Deps.asource_for`).
    names = ", ".join([*await asyncio.to_thread(build_tools, deps), ANSWER])
    note = f"librarian: up to {max_steps} steps with {names}"
    return {
        **new_turn(step("librarian_start", "think", note)),
        # Read by the runner and the next turn; the pipeline sets them later in a turn.
        "sources": [],
        "answer": "",
        "canonical_question": "",
        "language": answer_language(question, deps.settings.response_language),
        "librarian_scratchpad": [],
        "librarian_action": None,
        "librarian_steps": 0,
        "librarian_invalid": 0,
    }


async def librarian_agent(
    state: LibrarianState, deps: Deps, *, max_steps: int = MAX_STEPS
) -> dict[str, Any]:
    """One decision of the model: which tool next, or the answer."""
    taken = int(state.get("librarian_steps") or 0)
    if taken >= max_steps:
        why = f"step limit reached ({max_steps} steps): answering with what was found"
        return {
            "librarian_action": _TO_ANSWER,
            "intermediate_steps": [step("librarian_agent", "think", why, limit=taken)],
        }
    tools = await asyncio.to_thread(build_tools, deps)
    listing = [(t.name, t.description) for t in tools.values()]
    listing.append((ANSWER, librarian_prompts.LIBRARIAN_TOOL_HELP[ANSWER]))
    scratchpad = list(state.get("librarian_scratchpad") or [])
    messages = librarian_prompts.librarian_step_messages(
        state["question"],
        history_turns(state.get("messages") or []),
        listing,
        scratchpad,
        max_steps,
    )
    result = await ainvoke_structured(deps.llm, messages, Decision, Decision(tool=ANSWER))
    if not result.ok:
        return _unusable(state, taken, scratchpad, str(result.fallback_reason))
    decision = result.value
    shown = decision.thought or f"next: {decision.tool}" + (
        f" ({decision.input})" if decision.input else ""
    )
    think = step(
        "librarian_agent",
        "think",
        shown,
        step=taken + 1,
        tool=decision.tool,
        input=decision.input,
    )
    return {
        "librarian_steps": taken + 1,
        "librarian_invalid": 0,
        "librarian_action": {
            "tool": decision.tool,
            "input": decision.input,
            "thought": decision.thought,
        },
        "intermediate_steps": [think],
    }


def _unusable(
    state: LibrarianState, taken: int, scratchpad: list[dict[str, str]], reason: str
) -> dict[str, Any]:
    """An unusable reply is a step too; the model sees why, or the loop answers."""
    invalid = int(state.get("librarian_invalid") or 0) + 1
    steps: list[Step] = [
        step("librarian_agent", "error", f"unusable reply ({invalid} in a row): {reason}")
    ]
    action: dict[str, str] | None = None
    if invalid >= MAX_INVALID:
        why = f"{invalid} unusable replies in a row: answering with what was found"
        steps.append(step("librarian_agent", "think", why))
        action = _TO_ANSWER
    entry = {
        "thought": "",
        "tool": "",
        "input": "",
        "observation": f"error: your reply was not usable ({reason}); reply with one "
        'JSON object: {"thought": "...", "tool": "...", "input": "..."}',
    }
    return {
        "librarian_steps": taken + 1,
        "librarian_invalid": invalid,
        "librarian_action": action,
        "librarian_scratchpad": [*scratchpad, entry],
        "intermediate_steps": steps,
    }


async def librarian_tools(state: LibrarianState, deps: Deps) -> dict[str, Any]:
    """Run the chosen tool; whatever happens becomes the observation of this step."""
    action = state.get("librarian_action") or {}
    requested, text = action.get("tool", ""), action.get("input", "")
    registry = await asyncio.to_thread(build_tools, deps)
    name = resolve(requested, registry)
    if name is None:
        names = ", ".join([*registry, ANSWER])
        why = f"unknown tool {requested!r}; the tools are: {names}"
        observation = Observation(f"error: {why}", [step("librarian_tools", "error", why)])
    else:
        try:
            seen = list(state.get("search_results") or [])
            observation = await registry[name].run(text, state, seen)
        except Exception as exc:  # a tool's own bug must not end the turn either
            logger.warning("librarian tool %s failed: %s", name, exc)
            why = f"{name} failed: {type(exc).__name__}: {exc}"
            observation = Observation(f"error: {why}", [step(name, "error", why)])
    entry = {
        "thought": action.get("thought", ""),
        "tool": requested,
        "input": text,
        "observation": observation.text,
    }
    return {
        "librarian_action": None,
        "librarian_scratchpad": [*(state.get("librarian_scratchpad") or []), entry],
        "search_results": observation.results,
        "intermediate_steps": observation.steps,
    }


async def librarian_answer(state: LibrarianState, deps: Deps) -> dict[str, Any]:
    """The cited answer from what the loop found, streamed token by token."""
    sources = list(state.get("search_results") or [])[:MAX_ANSWER_SOURCES]
    question, language = state["question"], state.get("language", "en")
    # As in the pipeline: the installed versions the question names, dated old answers.
    named = names_in(question, installed_versions(deps.sources.values()))
    numbered = [
        (n, dated_title(s, named), (s.get("summary") or s.get("snippet", ""))[:SOURCE_CHARS])
        for n, s in enumerate(sources, 1)
    ]
    prompt = librarian_prompts.librarian_answer_messages(
        question, history_turns(state.get("messages") or []), language, numbered, named
    )
    answer, reason = await write_answer(deps.llm, prompt, sources, language, question)
    if reason:
        return {
            "answer": say("not_written", language, reason=reason),
            "sources": sources,
            "answer_failed": True,
            "intermediate_steps": [step("librarian_answer", "error", reason)],
        }
    note = f"answer written with {len(sources)} sources"
    return {
        "answer": answer,
        "sources": sources,
        "answer_failed": False,
        "intermediate_steps": [step("librarian_answer", "observe", note)],
    }


async def librarian_check(state: LibrarianState, deps: Deps) -> dict[str, Any]:
    """One grounding check (no retries in this mode), then the turn ends.

    A node of its own: the check's model call must not stream as answer text.
    """
    answer, sources = state.get("answer", ""), state.get("sources") or []
    language = state.get("language", "en")
    # The code check first (noted, never rewritten here): the pages it cites are sources.
    code = await review_code(state, deps, answer, rewrite=False, node="librarian_check")
    answer, sources = settle_code(code, sources, deps)
    steps: list[Step] = list(code.steps)
    details: GroundingDetails | None = None
    if state.get("answer_failed"):
        note = "not checked: generation failed"
    elif not sources:
        note = "not checked: no sources were found"
    elif not deps.settings.grounding:
        note = "not checked: grounding check off"
    else:
        # The summary step only, as this mode has always reported (the pipeline also
        # names each removed citation).
        graded = await grade(
            deps, state, "librarian_check", answer, sources, explain_removals=False
        )
        answer, details = graded.answer, graded.details
        steps += graded.steps
        note = "answer checked" if graded.report.passed else "answered with a warning"
        if not graded.report.passed:
            answer = f"{answer}\n\n{warning(graded.report, language)}"
    if not state.get("answer_failed"):
        found = [r for r in state.get("search_results") or [] if not is_reset(r)]
        answer = with_source_notice(answer, len(sources), found, language)
    update = finish(state, "librarian_check", answer, sources, note)
    update["intermediate_steps"] = steps + update["intermediate_steps"]
    update["grounding"] = details
    update["code_findings"] = code.findings
    return update


def route_decision(
    state: LibrarianState,
) -> Literal["librarian_agent", "librarian_tools", "librarian_answer"]:
    """To the tool the model chose, to the answer, or back for another decision."""
    action = state.get("librarian_action")
    if action is None:
        return "librarian_agent"  # the reply was unusable: ask again
    return "librarian_answer" if action.get("tool") == ANSWER else "librarian_tools"
