"""Benchmark: the HTTP service under concurrent streaming chats, checked event by event.

Part 1 (default) sends 50 chats at once to `POST /api/chat/stream` of a server on
loopback, with the scripted model (`scripted:echo`), an in-memory docs source that answers
after 20 ms (so every run has act/observe steps) and the answer cache off (so every chat
runs the whole graph). The same 50 chats run twice in one process, against a server that
computes 50 answers at once and against one that computes one at a time (the rest wait in
its queue), and the figures are printed side by side. Each server answers one chat first,
untimed, to warm up.

Part 2 (`--real`) sends 5 different questions at once to the real local model with the
installed docs (`codeweaver setup` must have run) and the default concurrency (1), so four
wait in line and must receive `queue` events. The model loads during the first answer.

Throughout both, `GET /api/health` is polled every 200 ms and its latency reported: it
stays low only while answering keeps off the server's event loop. Client and server share
one process (and its GIL), so the client's own work is part of every figure.

Every chat's events are checked: ids increase from 1, `queue` events come before anything
else, every `act` and every `observe` of the search comes before the first `token` (the
grounding check's `observe` follows the answer it checks), `done` arrives once and
last, and there is no `error`. The exit code is 1 if any chat fails these checks.

    .venv/bin/python -m codeweaver_eval.bench.serve_load [--chats 50] [--real]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx

from codeweaver.agent.state import Intent, SearchResult
from codeweaver.api.app import create_app
from codeweaver.config import Settings
from codeweaver.factory import build_deps
from codeweaver.sources.base import SourceStatus
from codeweaver_eval.serving import serve_in_thread

REAL_QUESTIONS = [
    "How do I read a file line by line in Python?",
    "How do I sort a list of dictionaries by a key in Python?",
    "What does the yield keyword do in Python?",
    "How do I parse a JSON string in Python?",
    "How do I run a shell command from Python and get its output?",
]
# Steps that judge the written answer, so they follow its tokens.
CHECKS = frozenset({"check_answer"})
HEALTH_EVERY = 0.2
SOURCE_DELAY = 0.02


class MemoryDocs:
    """An `installed_docs` stand-in: three fixed results after a short sleep, no I/O."""

    def __init__(self, delay: float) -> None:
        self.name = "installed_docs"
        self.delay = delay

    def status(self) -> SourceStatus:
        return SourceStatus("ready")

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        await asyncio.sleep(self.delay)
        return [
            {
                "title": f"Reading files, part {n}",
                "url": f"https://docs.example/files/{n}",
                "snippet": "Open a file with open() and iterate over it to read it line by "
                "line; each line keeps its newline. Use a with block to close the file.",
                "source": self.name,
                "score": 0.8,
            }
            for n in range(1, min(limit, 3) + 1)
        ]


@dataclass(frozen=True)
class Event:
    kind: str
    id: int
    data: dict[str, Any]
    at: float  # seconds from the request's start


@dataclass
class Chat:
    question: str
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def first_token(self) -> float | None:
        return next((e.at for e in self.events if e.kind == "token"), None)

    @property
    def positions(self) -> list[int]:
        return [int(e.data["position"]) for e in self.events if e.kind == "queue"]


def order_problems(events: Sequence[Event]) -> list[str]:
    """What is wrong with one chat's event sequence (empty: valid)."""
    if not events:
        return ["no events"]
    found: list[str] = []
    ids = [e.id for e in events]
    if ids[0] != 1 or any(b <= a for a, b in pairwise(ids)):
        found.append(f"ids not increasing from 1: {ids[:12]}")
    kinds = [e.kind for e in events]
    found += [f"error: {e.data.get('message')}" for e in events if e.kind == "error"]
    if kinds.count("done") != 1 or kinds[-1] != "done":
        found.append(f"done {kinds.count('done')}x, last event {kinds[-1]!r}")
    queued = kinds.count("queue")
    if kinds[:queued] != ["queue"] * queued:
        found.append("a queue event after the run started")
    if "token" not in kinds:
        found.append("no token event")
    else:
        first = kinds.index("token")
        late = [
            e
            for e in events[first:]
            if e.kind == "act"
            or (e.kind == "observe" and str(e.data.get("node")).rsplit("/", 1)[-1] not in CHECKS)
        ]
        found += [f"{e.kind} after the first token: {e.data.get('node')}" for e in late]
    return found


async def stream_chat(client: httpx.AsyncClient, question: str) -> Chat:
    """One chat over SSE, parsed by hand: blank lines end events, ':' lines are pings."""
    chat = Chat(question)
    started = time.perf_counter()
    async with client.stream("POST", "/api/chat/stream", json={"message": question}) as reply:
        if reply.status_code != 200:
            body = (await reply.aread()).decode(errors="replace")
            chat.problems.append(f"HTTP {reply.status_code}: {body[:200]}")
            return chat
        fields: dict[str, list[str]] = {}
        async for line in reply.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value.removeprefix(" "))
                continue
            if fields:
                chat.events.append(
                    Event(
                        kind=fields.get("event", ["message"])[0],
                        id=int(fields.get("id", ["0"])[0]),
                        data=json.loads("\n".join(fields.get("data", ["{}"]))),
                        at=time.perf_counter() - started,
                    )
                )
                fields = {}
    chat.seconds = time.perf_counter() - started
    chat.problems += order_problems(chat.events)
    return chat


async def poll_health(client: httpx.AsyncClient, polls: list[tuple[float, float]]) -> None:
    """GET /api/health every HEALTH_EVERY seconds until cancelled: (start, seconds) each."""
    origin = time.perf_counter()
    while True:
        started = time.perf_counter()
        reply = await client.get("/api/health")
        polls.append((started - origin, time.perf_counter() - started))
        reply.raise_for_status()
        await asyncio.sleep(HEALTH_EVERY)


@dataclass
class Run:
    label: str
    chats: list[Chat]
    wall: float
    polls: list[tuple[float, float]]  # health polls: (seconds from the start, latency)

    @property
    def health(self) -> list[float]:
        return [latency for _, latency in self.polls]

    @property
    def slowest_poll(self) -> str:
        at, latency = max(self.polls, key=lambda p: p[1], default=(0.0, float("nan")))
        return f"{ms(latency)} at {at:.1f} s"

    @property
    def valid(self) -> list[Chat]:
        return [c for c in self.chats if not c.problems]

    @property
    def completed(self) -> list[Chat]:
        return [c for c in self.chats if any(e.kind == "done" for e in c.events)]

    @property
    def queued(self) -> int:
        return sum(1 for c in self.chats if c.positions)

    def ttft(self) -> list[float]:
        return [t for c in self.chats if (t := c.first_token) is not None]

    def totals(self) -> list[float]:
        return [c.seconds for c in self.chats]


async def load(url: str, questions: list[str], label: str, warm_up: bool) -> Run:
    """All questions at once, with health polled meanwhile."""
    async with httpx.AsyncClient(
        base_url=url, timeout=httpx.Timeout(600.0), limits=httpx.Limits(max_connections=200)
    ) as client:
        if warm_up:
            await stream_chat(client, "warm up: how do I open a file?")
        polls: list[tuple[float, float]] = []
        poller = asyncio.create_task(poll_health(client, polls))
        started = time.perf_counter()
        chats = await asyncio.gather(*(stream_chat(client, q) for q in questions))
        wall = time.perf_counter() - started
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
    return Run(label, list(chats), wall, polls)


def serve_and_load(
    settings: Settings, questions: list[str], label: str, *, fake_source: bool
) -> Run:
    deps = build_deps(settings)
    if fake_source:
        deps.sources["installed_docs"] = MemoryDocs(SOURCE_DELAY)
    with serve_in_thread(create_app(settings, deps=deps)) as url:
        return asyncio.run(load(url, questions, label, warm_up=fake_source))


def pct(values: Sequence[float], q: int) -> float:
    """The q-th percentile (inclusive method); NaN when there is nothing to measure."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def ms(seconds: float) -> str:
    """Milliseconds below 10 s, seconds above."""
    return f"{seconds:.1f} s" if seconds >= 10 else f"{seconds * 1000:.0f} ms"


def table(runs: Sequence[Run], ratio: bool) -> None:
    """One column per run; with `ratio`, the second run's timings over the first's."""
    counts: list[tuple[str, Callable[[Run], str]]] = [
        ("completed (done)", lambda r: f"{len(r.completed)}/{len(r.chats)}"),
        ("valid event order", lambda r: f"{len(r.valid)}/{len(r.chats)}"),
        ("got queue events", lambda r: str(r.queued)),
        ("throughput", lambda r: f"{len(r.completed) / r.wall:.2f} chats/s"),
        ("health polls", lambda r: str(len(r.health))),
        ("health > 100 ms", lambda r: str(sum(1 for h in r.health if h > 0.1))),
        ("slowest health", lambda r: r.slowest_poll),
    ]
    timings: list[tuple[str, Callable[[Run], float]]] = [
        ("wall time", lambda r: r.wall),
        ("first token p50", lambda r: pct(r.ttft(), 50)),
        ("first token p95", lambda r: pct(r.ttft(), 95)),
        ("per chat p50", lambda r: pct(r.totals(), 50)),
        ("per chat p95", lambda r: pct(r.totals(), 95)),
        ("health p50", lambda r: pct(r.health, 50)),
        ("health p95", lambda r: pct(r.health, 95)),
        ("health max", lambda r: max(r.health, default=float("nan"))),
    ]
    print(f"  {'':18}" + "".join(f"{r.label:>18}" for r in runs) + ("     ratio" if ratio else ""))
    for name, text in counts:
        print(f"  {name:18}" + "".join(f"{text(r):>18}" for r in runs))
    for name, measure in timings:
        values = [measure(r) for r in runs]
        line = f"  {name:18}" + "".join(f"{ms(v):>18}" for v in values)
        if ratio and values[0]:
            line += f"{values[1] / values[0]:>9.1f}x"
        print(line)


def report_problems(runs: Sequence[Run]) -> bool:
    """Print each distinct problem once with how many chats had it; True when none did."""
    ok = True
    for run in runs:
        counts = Counter(problem for chat in run.chats for problem in chat.problems)
        for problem, count in counts.most_common():
            ok = False
            print(f"  INVALID [{run.label}] {count} chat(s): {problem}")
    return ok


def scripted(tmp: Path, chats: int) -> bool:
    questions = [f"How do I read file number {i} line by line in Python?" for i in range(chats)]
    runs = []
    for concurrency in (chats, 1):
        settings = Settings(
            data_dir=tmp / f"data-{concurrency}",
            cache_dir=tmp / "cache",
            model="scripted:echo",
            enabled_sources="none",
            cache_enabled=False,
            api_concurrency=concurrency,
            api_queue=max(64, chats),
            api_rate_per_minute=100_000,
        )
        label = f"concurrency {concurrency}"
        runs.append(serve_and_load(settings, questions, label, fake_source=True))
    print(
        f"Part 1: {chats} concurrent streaming chats, scripted:echo + in-memory docs "
        f"({SOURCE_DELAY * 1000:.0f} ms), cache off, api_queue {max(64, chats)}; "
        "2 cores, shared with other work"
    )
    table(runs, ratio=True)
    ok = report_problems(runs)
    fast, serial = runs
    print(
        f"Summary: {chats} concurrent streaming chats, scripted model on loopback (2 shared "
        f"cores): {len(fast.completed)}/{chats} completed, {len(fast.valid)}/{chats} in valid "
        f"order, {len(fast.completed) / fast.wall:.1f} chats/s at concurrency {chats} vs "
        f"{len(serial.completed) / serial.wall:.1f} at 1; first token p50/p95 at 1 over at "
        f"{chats}: {pct(serial.ttft(), 50) / pct(fast.ttft(), 50):.1f}x/"
        f"{pct(serial.ttft(), 95) / pct(fast.ttft(), 95):.1f}x; health p95 "
        f"{ms(pct(fast.health, 95))} / {ms(pct(serial.health, 95))}."
    )
    return ok


def real(tmp: Path) -> bool:
    settings = Settings(
        data_dir=tmp / "data",
        enabled_sources="installed_docs",
        cache_enabled=False,
        api_rate_per_minute=100_000,
    )
    print(
        f"Part 2: {len(REAL_QUESTIONS)} concurrent streaming chats, {settings.model} with "
        "installed docs, cache off, api_concurrency default (1); the model loads during the "
        "first answer, so its first token includes the load. 2 cores, shared with other work."
    )
    run = serve_and_load(settings, REAL_QUESTIONS, "real model", fake_source=False)
    order = sorted(run.chats, key=lambda c: c.first_token or float("inf"))
    print(f"  {'question':58}{'queue positions':>16}{'first token':>13}{'total':>9}  valid")
    for chat in order:
        first = "-" if chat.first_token is None else f"{chat.first_token:.1f} s"
        seen = "-".join(map(str, chat.positions)) or "-"
        print(
            f"  {chat.question[:56]:58}{seen:>16}{first:>13}"
            f"{chat.seconds:>7.1f} s  {'yes' if not chat.problems else 'NO'}"
        )
    table([run], ratio=False)
    expected = len(REAL_QUESTIONS) - 1  # all but the first wait for the one slot
    ok = report_problems([run])
    if run.queued < expected:
        ok = False
        print(f"  INVALID: {run.queued} chats got queue events, expected {expected}")
    print(
        f"Summary: {len(run.valid)}/{len(run.chats)} concurrent chats on the local model valid "
        f"at concurrency 1 ({run.queued} queued with position events) in {run.wall:.0f} s; "
        f"GET /api/health over {len(run.health)} polls meanwhile p50 {ms(pct(run.health, 50))}"
        f" / p95 {ms(pct(run.health, 95))} / max {ms(max(run.health, default=float('nan')))}"
        " (2 shared cores)."
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chats", type=int, default=50, help="concurrent chats in part 1")
    parser.add_argument("--real", action="store_true", help="part 2: the real local model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ok = real(Path(tmp)) if args.real else scripted(Path(tmp), args.chats)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
