"""Benchmark: a semantic-cache hit against the same question uncached, in one run.

Runs the default model end to end on a question (uncached), then asks a paraphrase of
it, which the semantic cache serves, and prints the two wall times and their ratio.

    .venv/bin/python -m codeweaver_eval.bench.cache [--model local:qwen2.5-coder-1.5b]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant, prepare_sources

QUESTION = "How do I convert a string to an integer in Python?"
PARAPHRASE = "how to convert a string to integer in python"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), cache_mode="semantic")
        if args.model:
            settings = settings.model_copy(update={"model": args.model})
        deps = build_deps(settings)
        prepare_sources(deps)
        async with open_assistant(deps) as assistant:
            await assistant.ask("warm up: what is a list?")  # loads the model once
            started = time.perf_counter()
            first = await assistant.ask(QUESTION)
            uncached = time.perf_counter() - started
            started = time.perf_counter()
            second = await assistant.ask(PARAPHRASE)
            cached = time.perf_counter() - started
    served = [s["node"] for s in second.steps][-1] == "return_cached_answer"
    print(f"model {settings.model}")
    print(f"  uncached : {uncached:6.2f} s  ({len(first.sources)} sources)")
    print(f"  cache hit: {cached:6.2f} s  (served from cache: {served})")
    print(f"  hit / uncached = {cached / uncached:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
