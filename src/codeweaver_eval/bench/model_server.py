"""Benchmark: questions one after another against the same questions at once, through one
`codeweaver model serve` (llama.cpp's native server, continuous batching over its slots).

Two layers, each measured side by side in one run:

1. the model server alone: one chat completion per question (the question as the user
   message, `max_tokens` as the service sends it);
2. the whole pipeline: one `codeweaver serve` using the model server as
   `openai:qwen2.5-coder-1.5b` (installed docs, cache off), one streamed chat per question.

Questions are StackEval titles (public data, `--file`), the first `--questions`.

    .venv/bin/python -m codeweaver_eval.bench.model_server \\
        [--questions 4] [--slots 4] [--file F.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from codeweaver_eval.bench import serve_load
from codeweaver_eval.bench.serve_load import stream_chat
from codeweaver_eval.repository import SHARED_DATA

STACKEVAL = SHARED_DATA / "intent" / "stackeval" / "stack-eval.jsonl"
ALIAS = "qwen2.5-coder-1.5b"
MAX_TOKENS = 200


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def questions(path: Path, count: int) -> list[str]:
    if not path.is_file():
        return serve_load.REAL_QUESTIONS[:count]
    found: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        title = json.loads(line)["question"].strip().splitlines()[0].strip()
        if title.endswith("?") and 20 < len(title) < 120:
            found.append(title)
        if len(found) == count:
            break
    return found


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path, ready: str) -> Iterator[None]:
    """A CodeWeaver process, until `ready` answers 200 (and `status` is not `starting`)."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 300
            while True:
                if proc.poll() is not None:
                    sys.exit(f"{args} stopped:\n{log.read_text()}")
                try:
                    response = httpx.get(ready, timeout=2)
                    if response.status_code == 200 and response.json().get("status") != "starting":
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    sys.exit(f"{args} not ready in 300 s:\n{log.read_text()}")
                time.sleep(0.5)
            yield
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


async def completion(client: httpx.AsyncClient, question: str) -> float:
    started = time.perf_counter()
    body = {
        "model": ALIAS,
        "messages": [{"role": "user", "content": question}],
        "max_tokens": MAX_TOKENS,
        "seed": 0,
        "temperature": 0.1,
    }
    response = await client.post("/v1/chat/completions", json=body)
    response.raise_for_status()
    return time.perf_counter() - started


async def chat(client: httpx.AsyncClient, question: str) -> float:
    started = time.perf_counter()
    done = await stream_chat(client, question)
    if done.problems:
        raise RuntimeError(f"chat failed: {done.problems}")
    return time.perf_counter() - started


Ask = Callable[[httpx.AsyncClient, str], Awaitable[float]]


async def side_by_side(base: str, asked: list[str], call: Ask) -> tuple[float, float]:
    """(wall time one after another, wall time all at once)."""
    async with httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(900.0)) as client:
        await call(client, "warm up: how do I open a file?")
        started = time.perf_counter()
        for question in asked:
            await call(client, question)
        sequential = time.perf_counter() - started
        started = time.perf_counter()
        await asyncio.gather(*(call(client, q) for q in asked))
        concurrent = time.perf_counter() - started
    return sequential, concurrent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--file", type=Path, default=STACKEVAL)
    args = parser.parse_args()
    asked = questions(args.file, args.questions)
    exe = [sys.executable, "-m", "codeweaver"]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEWEAVER_", "OPENAI_"))}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        model_port, serve_port = free_port(), free_port()
        model_url = f"http://127.0.0.1:{model_port}"
        serve_args = ["model", "serve", "--port", str(model_port), "--slots", str(args.slots)]
        with process(
            [*exe, *serve_args],
            {**base_env, "CODEWEAVER_MAX_TOKENS": str(MAX_TOKENS)},
            tmp / "model.log",
            f"{model_url}/codeweaver/model",
        ):
            rows = [("model server alone", asyncio.run(side_by_side(model_url, asked, completion)))]
            env = {
                **base_env,
                "CODEWEAVER_MODEL": f"openai:{ALIAS}",
                "OPENAI_BASE_URL": f"{model_url}/v1",
                "CODEWEAVER_SOURCES": "installed_docs",
                "CODEWEAVER_CACHE": "false",
                "CODEWEAVER_MAX_TOKENS": str(MAX_TOKENS),
                "CODEWEAVER_DATA_DIR": str(tmp / "data"),
                "CODEWEAVER_API_RATE": "100000",
            }
            serve_url = f"http://127.0.0.1:{serve_port}"
            with process(
                [*exe, "serve", "--port", str(serve_port)],
                env,
                tmp / "serve.log",
                f"{serve_url}/api/health",
            ):
                rows.append(
                    (
                        "pipeline (codeweaver serve)",
                        asyncio.run(side_by_side(serve_url, asked, chat)),
                    )
                )
    print(f"\n{len(asked)} StackEval questions, {args.slots} slots, max {MAX_TOKENS} tokens")
    for question in asked:
        print(f"  - {question}")
    print("\n| layer | one after another | all at once | ratio |\n|---|---|---|---|")
    for label, (sequential, concurrent) in rows:
        ratio = sequential / concurrent
        print(f"| {label} | {sequential:.1f} s | {concurrent:.1f} s | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
