"""Benchmark: the search fan-out, side by side with sequential calls, in one run.

Three sources talk HTTP through the shared client to a server on loopback that answers
each request after D ms. The graph's search stage (classify_intent's fan-out to
collect_results) is timed against the same three sources called one after another.
Then every online source is cut off from the network (its traffic sent to a refused
port, or to a proxy host that does not resolve) and the time until all are skipped is
measured.

    .venv/bin/python -m codeweaver_eval.bench.fanout [--delay-ms 300] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from codeweaver.agent.deps import Deps
from codeweaver.agent.runner import Assistant
from codeweaver.agent.state import Intent, SearchResult
from codeweaver.config import Settings
from codeweaver.llm.scripted import echo_model
from codeweaver.sources.base import SourceError, SourceStatus, create_source
from codeweaver.sources.http import SourceHttpClient


def serve(delay: float) -> tuple[ThreadingHTTPServer, int]:
    class Slow(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay)
            body = json.dumps({"items": [{"title": f"result for {self.path}"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


class LoopbackSource:
    """A source answering from the loopback server through the shared HTTP layer."""

    def __init__(self, name: str, port: int) -> None:
        self.name = name
        self.http = SourceHttpClient(name, base_url=f"http://127.0.0.1:{port}")

    def status(self) -> SourceStatus:
        return SourceStatus("ready")

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        data = await self.http.get_json(f"/{self.name}")
        return [
            {
                "title": item["title"],
                "url": f"http://127.0.0.1/{self.name}/{i}",
                "snippet": "A loopback result long enough to be kept by the filter stage.",
                "source": self.name,
                "score": 0.9,
            }
            for i, item in enumerate(data["items"])
        ]


async def search_stage(assistant: Assistant, question: str) -> float:
    """Seconds from the fan-out (classify_intent done) to collect_results."""
    started = ended = None
    async for event in assistant.stream(question):
        if event.step is None:
            continue
        if event.step["node"] == "classify_intent" and started is None:
            started = time.perf_counter()
        if event.step["node"] == "collect_results" and ended is None:
            ended = time.perf_counter()
    assert started is not None and ended is not None
    return ended - started


async def sequential(sources: list[LoopbackSource]) -> float:
    started = time.perf_counter()
    for source in sources:
        await source.search("q", "learning", 5)
    return time.perf_counter() - started


ONLINE_SOURCES = ["stackoverflow", "github", "tavily_docs", "web"]
PROXY_VARIABLES = ["ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "DDGS_PROXY"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def offline_skip(proxy: str) -> tuple[float, dict[str, str]]:
    """Every online source with all traffic sent to a dead `proxy`: seconds until all
    have given up. The sources are the real ones, unmodified: httpx and ddgs honour the
    proxy variables, which makes any network unreachable without touching the code."""
    saved = {k: os.environ.get(k) for k in PROXY_VARIABLES}
    os.environ.update(dict.fromkeys(PROXY_VARIABLES, proxy))
    try:
        settings = Settings(
            github_token=SecretStr("bench-token"), tavily_api_key=SecretStr("bench-key")
        )
        sources = [create_source(name, settings) for name in ONLINE_SOURCES]

        async def attempt(source: Any) -> str:
            try:
                await source.search("How do I read a file?", "learning", 5)
            except SourceError as exc:
                return f"skipped: {exc}"
            return "answered"

        started = time.perf_counter()
        outcomes = await asyncio.gather(*(attempt(s) for s in sources))
        took = time.perf_counter() - started
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return took, {s.name: o for s, o in zip(sources, outcomes, strict=True)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay-ms", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    delay = args.delay_ms / 1000

    server, port = serve(delay)
    names = ["stackoverflow", "github", "installed_docs"]
    sources = [LoopbackSource(name, port) for name in names]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), cache_enabled=False, enabled_sources="none")
        deps = Deps(llm=echo_model(), settings=settings, sources={s.name: s for s in sources})
        assistant = Assistant(deps)
        await search_stage(assistant, "warm up")
        fanned, serial = [], []
        for i in range(args.repeats):
            fanned.append(await search_stage(assistant, f"How do I read file number {i}?"))
            serial.append(await sequential(sources))
    server.shutdown()
    parallel_s, sequential_s = statistics.median(fanned), statistics.median(serial)
    print(f"three sources, each answering after D = {args.delay_ms} ms; median of {args.repeats}")
    print(f"  fan-out search stage : {parallel_s * 1000:7.0f} ms = {parallel_s / delay:.2f} × D")
    print(
        f"  sequential calls     : {sequential_s * 1000:7.0f} ms = {sequential_s / delay:.2f} × D"
    )
    print(f"  sequential / fan-out : {sequential_s / parallel_s:.2f}")

    for label, proxy in [
        ("connection refused", f"http://127.0.0.1:{closed_port()}"),
        ("host does not resolve", "http://no-such-host.invalid:3128"),
    ]:
        took, outcomes = await offline_skip(proxy)
        print(f"network unreachable ({label}): all online sources skipped in {took * 1000:.0f} ms")
        for name, outcome in outcomes.items():
            print(f"  {name:14} {outcome[:100]}")


if __name__ == "__main__":
    asyncio.run(main())
