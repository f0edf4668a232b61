"""Benchmark: what the grounding check costs, as a ratio to answering without it.

Answers the same questions twice in one run on the default model — once with the check
off, once with it on (cache off both times, so every answer is computed) — and prints
per answer the model calls and the wall time of each, and the ratios. With the check on,
a failing answer is rewritten (at most `CODEWEAVER_GROUNDING_RETRIES` times), so the
ratio includes the rewrites it caused.

    .venv/bin/python bench/grounding_cost.py [--questions 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant, prepare_sources

QUESTIONS = [
    "How do I read a file line by line in Python?",
    "How do I convert a string to an integer in Python?",
    "How do I sort a list of dictionaries by a key in Python?",
    "How do I parse a JSON string in Python?",
    "How do I get the current time in Python?",
    "How do I remove duplicates from a list in Python?",
]


async def run(checked: bool, questions: list[str], data: Path) -> tuple[float, int, int]:
    settings = Settings(data_dir=data, cache_enabled=False, grounding_check=checked)
    deps = build_deps(settings)
    prepare_sources(deps)
    seconds, calls, warned = 0.0, 0, 0
    async with open_assistant(deps) as assistant:
        await assistant.ask("warm up: what is a tuple?")  # loads the model once
        for question in questions:
            started = time.perf_counter()
            result = await assistant.ask(question)
            seconds += time.perf_counter() - started
            calls += sum(1 for s in result.steps if s["node"] in CALL_NODES)
            calls += sum(s["node"] == "check_answer" and _asked(s) for s in result.steps)
            warned += int("**Warning:**" in result.answer)
    return seconds / len(questions), calls, warned


# Steps that each stand for one model call on this path.
CALL_NODES = frozenset({"classify_intent", "generate_answer", "refine_search"})


def _asked(step: Mapping[str, Any]) -> bool:
    data = step.get("data")
    return isinstance(data, dict) and bool(data.get("asked_model"))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    questions = QUESTIONS[: args.questions]
    with tempfile.TemporaryDirectory() as off_dir, tempfile.TemporaryDirectory() as on_dir:
        off = await run(False, questions, Path(off_dir))
        on = await run(True, questions, Path(on_dir))
    n = len(questions)
    print(f"{n} questions, local model, cache off; per answer:")
    print(f"  check off: {off[0]:6.1f} s  {off[1] / n:4.1f} model calls")
    print(f"  check on : {on[0]:6.1f} s  {on[1] / n:4.1f} model calls  ({on[2]} with a warning)")
    print(f"  ratio    : {on[0] / off[0]:.2f}x time, {on[1] / max(1, off[1]):.2f}x model calls")


if __name__ == "__main__":
    asyncio.run(main())
