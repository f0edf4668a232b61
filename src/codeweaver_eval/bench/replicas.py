"""Benchmark: one replica against two, as `scripts/cluster.sh` starts them.

Every topology is real processes: replicas (`codeweaver serve`) sharing PostgreSQL,
Redis (rate limit and run queue) and a Milvus Lite server, and in part 2 one model
server. Chats are streamed from this process to the replicas in turn (round robin, as a
load balancer would), all at once, and each chat's events are checked as in
`codeweaver_eval.bench.serve_load`. The answer cache is off, so every chat runs the whole graph.

Part 1 (default): the scripted model (`scripted:echo`), the installed docs as the
source: orchestration-bound, so a second replica should add throughput on a second core.
The run queue allows `--slots` answers at once across the cluster.

Part 2 (`--real`): the embedded model behind `codeweaver model serve`, shared by the
replicas; model-bound, so two replicas should give the same throughput as one (the model
computes one answer at a time), with no errors, and the places in line reported right:
in a burst of N, the first places seen are 1..N-1, each chat's places never go up.

    .venv/bin/python -m codeweaver_eval.bench.replicas \\
        [--chats 60] [--slots 64] [--real [--real-chats 4]]

Needs PostgreSQL and Redis (see README) and `codeweaver setup` (the installed docs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from itertools import cycle, pairwise
from pathlib import Path

import httpx

from codeweaver_eval.bench import serve_load
from codeweaver_eval.bench.serve_load import (
    Chat,
    Run,
    ms,
    pct,
    poll_health,
    report_problems,
    stream_chat,
    table,
)
from codeweaver_eval.repository import ROOT

CLUSTER = ROOT / "scripts" / "cluster.sh"
REAL_QUESTIONS = [*serve_load.REAL_QUESTIONS, "How do I check if a file exists in Python?"]


def cluster(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(["bash", str(CLUSTER), *args], env=env, text=True, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"cluster.sh {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


async def load(urls: list[str], questions: list[str], label: str) -> Run:
    """All questions at once, spread over the replicas; health of the first polled."""
    clients = [
        httpx.AsyncClient(
            base_url=url, timeout=httpx.Timeout(900.0), limits=httpx.Limits(max_connections=200)
        )
        for url in urls
    ]
    try:
        for client in clients:  # each replica answers once, untimed
            await stream_chat(client, "warm up: how do I open a file?")
        polls: list[tuple[float, float]] = []
        poller = asyncio.create_task(poll_health(clients[0], polls))
        started = time.perf_counter()
        chats = await asyncio.gather(
            *(stream_chat(client, q) for client, q in zip(cycle(clients), questions, strict=False))
        )
        wall = time.perf_counter() - started
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
    finally:
        for client in clients:
            await client.aclose()
    return Run(label, list(chats), wall, polls)


def topology(tmp: Path, replicas: int, env: dict[str, str], questions: list[str]) -> Run:
    state = tmp / f"cluster-{replicas}-{env['CODEWEAVER_MODEL'].replace(':', '-')}"
    env = {**env, "CLUSTER_DIR": str(state)}
    cluster(env, "start", "--replicas", str(replicas))
    try:
        port = int(env.get("CLUSTER_REPLICA_PORT", "8101"))
        urls = [f"http://127.0.0.1:{port + i}" for i in range(replicas)]
        label = f"{replicas} replica{'s' if replicas > 1 else ''}"
        return asyncio.run(load(urls, questions, label))
    finally:
        cluster(env, "stop")


def base_env(slots: int, sources: str = "installed_docs") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEWEAVER_")}
    env.update(
        {
            "CODEWEAVER_SOURCES": sources,
            "CODEWEAVER_CACHE": "false",
            "CODEWEAVER_API_RATE": "100000",
            "CODEWEAVER_API_CONCURRENCY": str(slots),
            "CODEWEAVER_API_QUEUE": "256",
        }
    )
    return env


def place_problems(chats: list[Chat], slots: int) -> list[str]:
    """Places in line of a burst: the first seen are 1..N-slots, none goes up."""
    found = [
        f"places went up: {chat.positions}"
        for chat in chats
        if any(b > a for a, b in pairwise(chat.positions))
    ]
    first = sorted(chat.positions[0] for chat in chats if chat.positions)
    expected = list(range(1, len(chats) - slots + 1))
    if first != expected:
        found.append(f"first places {first}, expected {expected}")
    return found


def scripted(tmp: Path, chats: int, slots: int, sources: str) -> bool:
    env = {**base_env(slots, sources), "CODEWEAVER_MODEL": "scripted:echo"}
    questions = [f"How do I read file number {i} line by line in Python?" for i in range(chats)]
    runs = [topology(tmp, n, env, questions) for n in (1, 2)]
    print(f"\nPart 1: {chats} chats at once, scripted model, {slots} run slots shared in Redis")
    table(runs, ratio=True)
    one, two = runs
    print(
        f"\n  chats/s: {len(two.completed) / two.wall:.2f} with 2 replicas over "
        f"{len(one.completed) / one.wall:.2f} with 1 = "
        f"{(len(two.completed) / two.wall) / (len(one.completed) / one.wall):.2f}x; "
        f"first token p95 {ms(pct(two.ttft(), 95))} over {ms(pct(one.ttft(), 95))}"
    )
    return report_problems(runs)


def real(tmp: Path, chats: int) -> bool:
    env = {
        **base_env(1),
        "CODEWEAVER_MODEL": "local:qwen2.5-coder-1.5b",
        "CODEWEAVER_MAX_TOKENS": "200",
    }
    env.pop("CODEWEAVER_API_CONCURRENCY")  # the model server says how many at once
    questions = (REAL_QUESTIONS * ((chats // len(REAL_QUESTIONS)) + 1))[:chats]
    runs = [topology(tmp, n, env, questions) for n in (1, 2)]
    print(f"\nPart 2: {chats} real chats at once, one shared model server (1 answer at a time)")
    table(runs, ratio=True)
    ok = report_problems(runs)
    for run in runs:
        problems = place_problems(run.chats, slots=1)
        print(f"  places in line [{run.label}]: {[c.positions for c in run.chats]}")
        for problem in problems:
            ok = False
            print(f"  INVALID [{run.label}] {problem}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=60)
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--sources", default="installed_docs", help="part 1's sources")
    parser.add_argument("--real", action="store_true", help="part 2 only: the real model")
    parser.add_argument("--real-chats", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        ok = (
            real(tmp, args.real_chats)
            if args.real
            else scripted(tmp, args.chats, args.slots, args.sources)
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
