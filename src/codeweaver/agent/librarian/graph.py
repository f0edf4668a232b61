"""The librarian graph: model decisions and tool runs in a loop, then an answer.

    START → librarian_start → librarian_agent ⇄ librarian_tools
    librarian_agent → librarian_answer → librarian_check → END

It runs over the pipeline's `GraphState` with the same checkpointer, so both modes
continue one thread: each reads the other's turns from `messages`, and each turn's
first node clears the per-turn channels with the reset token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from codeweaver.agent.citations import tidy_answer
from codeweaver.agent.deps import Deps, step
from codeweaver.agent.grounding import check_grounding, warning
from codeweaver.agent.language import answer_language
from codeweaver.agent.librarian.protocol import ANSWER, Decision
from codeweaver.agent.librarian.tools import Observation, build_tools, resolve
from codeweaver.agent.nodes.analyze import history_turns
from codeweaver.agent.nodes.answer import finish
from codeweaver.agent.nodes.check import grounding_reader
from codeweaver.agent.prompts import librarian as librarian_prompts
from codeweaver.agent.state import GraphState, Step, new_turn
from codeweaver.agent.user_text import say
from codeweaver.llm.scripts import in_language_kwargs
from codeweaver.llm.structured import ainvoke_structured, message_text

logger = logging.getLogger(__name__)

MAX_STEPS = 10  # decisions per turn, so a confused model cannot loop for ever
MAX_INVALID = 2  # unusable model replies in a row before answering with what was found
MAX_ANSWER_SOURCES = 8  # the answer prompt must fit a 4k context next to the question
SOURCE_CHARS = 400
LIBRARIAN_NODES = (
    "librarian_start",
    "librarian_agent",
    "librarian_tools",
    "librarian_answer",
    "librarian_check",
)
_TO_ANSWER: dict[str, str] = {"tool": ANSWER, "input": ""}


@dataclass(frozen=True)
class Librarian:
    """The nodes of the loop, closing over the dependencies and the step limit."""

    deps: Deps
    max_steps: int = MAX_STEPS

    async def start(self, state: GraphState) -> dict[str, Any]:
        """A new turn: clear what the thread's previous turn (of either mode) left."""
        question = state.get("question", "")
        names = ", ".join([*build_tools(self.deps), ANSWER])
        note = f"librarian: up to {self.max_steps} steps with {names}"
        return {
            **new_turn(step("librarian_start", "think", note)),
            # Read by the runner and the next turn; the pipeline sets them later in a turn.
            "sources": [],
            "answer": "",
            "canonical_question": "",
            "language": answer_language(question, self.deps.settings.response_language),
            "librarian_scratchpad": [],
            "librarian_action": None,
            "librarian_steps": 0,
            "librarian_invalid": 0,
        }

    async def agent(self, state: GraphState) -> dict[str, Any]:
        """One decision of the model: which tool next, or the answer."""
        taken = int(state.get("librarian_steps") or 0)
        if taken >= self.max_steps:
            why = f"step limit reached ({self.max_steps} steps): answering with what was found"
            return {
                "librarian_action": _TO_ANSWER,
                "intermediate_steps": [step("librarian_agent", "think", why, limit=taken)],
            }
        tools = build_tools(self.deps)
        listing = [(t.name, t.description) for t in tools.values()]
        listing.append((ANSWER, librarian_prompts.LIBRARIAN_TOOL_HELP[ANSWER]))
        scratchpad = list(state.get("librarian_scratchpad") or [])
        messages = librarian_prompts.librarian_step_messages(
            state.get("question", ""),
            history_turns(state.get("messages") or []),
            listing,
            scratchpad,
            self.max_steps,
        )
        result = await ainvoke_structured(self.deps.llm, messages, Decision, Decision(tool=ANSWER))
        if not result.ok:
            return self._unusable(state, taken, scratchpad, str(result.fallback_reason))
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
        self, state: GraphState, taken: int, scratchpad: list[dict[str, str]], reason: str
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

    async def tools(self, state: GraphState) -> dict[str, Any]:
        """Run the chosen tool; whatever happens becomes the observation of this step."""
        action = state.get("librarian_action") or {}
        requested, text = action.get("tool", ""), action.get("input", "")
        registry = build_tools(self.deps)
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

    async def answer(self, state: GraphState) -> dict[str, Any]:
        """The cited answer from what the loop found, streamed token by token."""
        sources = list(state.get("search_results") or [])[:MAX_ANSWER_SOURCES]
        language = state.get("language", "en")
        numbered = [
            (n, s["title"], (s.get("summary") or s.get("snippet", ""))[:SOURCE_CHARS])
            for n, s in enumerate(sources, 1)
        ]
        prompt = librarian_prompts.librarian_answer_messages(
            state.get("question", ""),
            history_turns(state.get("messages") or []),
            language,
            numbered,
        )
        try:
            steer = in_language_kwargs(self.deps.llm, language, state.get("question", ""))
            reply = await self.deps.llm.ainvoke(prompt, **steer)
            text = tidy_answer(message_text(reply), sources)
            reason = "" if text else "the model returned an empty answer"
        except Exception as exc:  # the user still gets the sources
            logger.warning("librarian answer failed: %s", exc)
            text, reason = "", f"{type(exc).__name__}: {exc}"
        if reason:
            return {
                "answer": say("not_written", language, reason=reason),
                "sources": sources,
                "answer_failed": True,
                "intermediate_steps": [step("librarian_answer", "error", reason)],
            }
        note = f"answer written with {len(sources)} sources"
        return {
            "answer": text,
            "sources": sources,
            "answer_failed": False,
            "intermediate_steps": [step("librarian_answer", "observe", note)],
        }

    async def check(self, state: GraphState) -> dict[str, Any]:
        """One grounding check (no retries in this mode), then the turn ends.

        A node of its own: the check's model call must not stream as answer text.
        """
        answer, sources = state.get("answer", ""), state.get("sources") or []
        language = state.get("language", "en")
        steps: list[Step] = []
        details: dict[str, Any] | None = None
        if state.get("answer_failed"):
            note = "not checked: generation failed"
        elif not sources:
            answer = f"{answer}\n\n{say('no_sources_found', language)}"
            note = "not checked: no sources were found"
        elif not self.deps.settings.grounding_check:
            note = "not checked: grounding check off"
        else:
            by_words = language == "en"
            report = await check_grounding(
                grounding_reader(self.deps),
                state.get("question", ""),
                answer,
                sources,
                by_words=by_words,
            )
            answer = report.cleaned(answer, len(sources))  # unsupported citations go
            details = report.to_dict()
            steps.append(step("librarian_check", "observe", report.summary(), **details))
            if report.model_problem:
                problem = f"claim check fell back: {report.model_problem}"
                steps.append(step("librarian_check", "error", problem))
            note = "answer checked" if report.passed else "answered with a warning"
            if not report.passed:
                answer = f"{answer}\n\n{warning(report, language)}"
        update = finish(state, "librarian_check", answer, sources, note)
        update["intermediate_steps"] = steps + update["intermediate_steps"]
        update["grounding"] = details
        return update


def route_decision(
    state: GraphState,
) -> Literal["librarian_agent", "librarian_tools", "librarian_answer"]:
    """To the tool the model chose, to the answer, or back for another decision."""
    action = state.get("librarian_action")
    if action is None:
        return "librarian_agent"  # the reply was unusable: ask again
    return "librarian_answer" if action.get("tool") == ANSWER else "librarian_tools"


def build_librarian_graph(
    deps: Deps,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    max_steps: int = MAX_STEPS,
) -> Any:
    """The compiled librarian graph; `max_steps` is lowered by tests."""
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    librarian = Librarian(deps, max_steps)
    builder = StateGraph(GraphState)
    builder.add_node("librarian_start", librarian.start)
    builder.add_node("librarian_agent", librarian.agent)
    builder.add_node("librarian_tools", librarian.tools)
    builder.add_node("librarian_answer", librarian.answer)
    builder.add_node("librarian_check", librarian.check)
    builder.add_edge(START, "librarian_start")
    builder.add_edge("librarian_start", "librarian_agent")
    builder.add_conditional_edges("librarian_agent", route_decision)  # its Literal: the targets
    builder.add_edge("librarian_tools", "librarian_agent")
    builder.add_edge("librarian_answer", "librarian_check")
    builder.add_edge("librarian_check", END)
    graph = builder.compile(checkpointer=checkpointer, name="codeweaver_librarian")
    # A step takes two supersteps (decide, run) and LangGraph stops at 25 by default.
    return graph.with_config(recursion_limit=2 * max_steps + 10)
