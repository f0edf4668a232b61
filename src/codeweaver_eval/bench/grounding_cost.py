"""Benchmark: what the grounding check costs, as a ratio to answering without it.

Answers the same questions twice in one run on the default model — with the check off
and on, side by side per question (cache off both times, so every answer is computed) —
and prints per answer the model calls and the wall time of each, and the ratios. With the check on,
a failing answer is rewritten (at most `CODEWEAVER_GROUNDING_RETRIES` times), so the
ratio includes the rewrites it caused.

    .venv/bin/python -m codeweaver_eval.bench.grounding_cost [--questions 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant, prepare_sources
from codeweaver.llm.registry import create_chat_model

QUESTIONS = [
    "How do I read a file line by line in Python?",
    "How do I convert a string to an integer in Python?",
    "How do I sort a list of dictionaries by a key in Python?",
    "How do I parse a JSON string in Python?",
    "How do I get the current time in Python?",
    "How do I remove duplicates from a list in Python?",
]


async def run(
    questions: list[str], root: Path, flagged: list[str]
) -> dict[bool, tuple[float, int, int]]:
    """Each question answered with the check off and on, alternating which goes first.

    Both assistants share one loaded model, so the pair differs only in the check and
    the machine's noise falls on both sides alike.
    """
    base = Settings()
    llm = create_chat_model(base.model, base)
    totals = {False: [0.0, 0, 0], True: [0.0, 0, 0]}
    async with AsyncExitStack() as stack:
        assistants = {}
        for checked in (False, True):
            settings = Settings(
                data_dir=root / str(checked), cache_enabled=False, grounding=checked
            )
            deps = build_deps(settings, llm=llm)
            prepare_sources(deps)
            assistants[checked] = await stack.enter_async_context(open_assistant(deps))
        await assistants[False].ask("warm up: what is a tuple?")  # loads the model once
        for index, question in enumerate(questions):
            order = (False, True) if index % 2 == 0 else (True, False)
            for checked in order:
                started = time.perf_counter()
                result = await assistants[checked].ask(question)
                total = totals[checked]
                total[0] += time.perf_counter() - started
                total[1] += sum(1 for s in result.steps if s["node"] in CALL_NODES)
                total[1] += sum(s["node"] == "check_answer" and _asked(s) for s in result.steps)
                total[2] += int("**Warning:**" in result.answer)
                flagged.extend(
                    f"{question} → {s['message']}: {_unsupported(s)}"
                    for s in result.steps
                    if s["node"] == "check_answer" and s["kind"] == "observe" and _failed(s)
                )
    n = len(questions)
    return {k: (v[0] / n, int(v[1]), int(v[2])) for k, v in totals.items()}


# Steps that each stand for one model call on this path.
CALL_NODES = frozenset(
    {"classify_intent", "generate_answer", "refine_search", "rewrite_question", "answer_directly"}
)


def _failed(step: Mapping[str, Any]) -> bool:
    data = step.get("data")
    return isinstance(data, dict) and data.get("passed") is False


def _unsupported(step: Mapping[str, Any]) -> str:
    items = step.get("data", {}).get("unsupported") or []
    return "; ".join(f"{u['claim'][:90]!r} ({u['reason']})" for u in items)


def _asked(step: Mapping[str, Any]) -> bool:
    data = step.get("data")
    return isinstance(data, dict) and bool(data.get("asked_model"))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    questions = QUESTIONS[: args.questions]
    with tempfile.TemporaryDirectory() as root:
        flagged: list[str] = []
        figures = await run(questions, Path(root), flagged)
    off, on = figures[False], figures[True]
    n = len(questions)
    print(f"{n} questions, local model, cache off; per answer:")
    print(f"  check off: {off[0]:6.1f} s  {off[1] / n:4.1f} model calls")
    print(f"  check on : {on[0]:6.1f} s  {on[1] / n:4.1f} model calls  ({on[2]} with a warning)")
    print(f"  ratio    : {on[0] / off[0]:.2f}x time, {on[1] / max(1, off[1]):.2f}x model calls")
    print(f"drafts the check sent back ({len(flagged)}):")
    for line in flagged:
        print(f"  {line}")


if __name__ == "__main__":
    asyncio.run(main())
