"""The online sources as the shared contract tests see them (`test_online_contract.py`):
how to build each with a test's clock and recorded sleeps, and its API's recorded answers,
each in the shape the API documents."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import respx

from codeweaver.sources.base import Source
from codeweaver.sources.github import NO_TOKEN, GitHubCodeSource
from codeweaver.sources.github_issues import TOKEN_REJECTED, GitHubIssuesSource
from codeweaver.sources.http import HttpPolicy
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver.sources.tavily_docs import TavilyDocsSource
from codeweaver.vocabulary import Intent
from tests.fakes import FakeClock

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GITHUB = "https://api.github.com"
STACKEXCHANGE = "https://api.stackexchange.com/2.3"
TOKEN = "ghp_TESTTOKEN0123456789abcdefABCDEF"
SE_KEY = "sekrit-key-0123456789"
TAVILY_KEY = "tvly-dev-S3cr3tK3y0123456789abcdef"
WALL_NOW = 1_700_000_000.0
COOLDOWN = HttpPolicy().cooldown

Sleep = Callable[[float], Any]
Build = Callable[[Sleep, FakeClock, "str | None"], Source]


def recorded_sleep(sleeps: list[float]) -> Callable[[float], Awaitable[None]]:
    """An `asyncio.sleep` stand-in that appends each wait to `sleeps` and returns at once."""

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return sleep


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def json_reply(status: int, name: str) -> Callable[[], httpx.Response]:
    return lambda: httpx.Response(status, json=load(name))


def echo_authorization(status: int) -> Callable[[httpx.Request], httpx.Response]:
    """An error page echoing the Authorization header it received."""
    return lambda request: httpx.Response(
        status, text=f"upstream failed for {request.headers['authorization']}"
    )


@dataclass(frozen=True)
class Online:
    """One online source and its API's recorded answers."""

    name: str
    build: Build
    method: str
    url: str  # the search endpoint every question hits first
    question: str
    intent: Intent
    limit: int
    results: int  # how many results the recorded success gives
    secret: str
    ok: Callable[[], httpx.Response]
    # Routes a success needs besides the search (answers, comments): set up by `found`.
    side_routes: Callable[[respx.MockRouter], None]
    flaky: Callable[[], httpx.Response]  # the API's own server-error answer
    down: Callable[[], httpx.Response]  # a 503, every time
    malformed: Callable[[], httpx.Response]  # 200 with a body that is not JSON
    client_error: Callable[[], httpx.Response]  # a documented 4xx, not worth a retry
    client_says: str
    timeout_says: str
    unreachable_says: str
    echo: Callable[[httpx.Request], httpx.Response]  # an error that repeats the secret
    echo_says: str
    redacted: str  # what stands for the secret in the echoed error
    missing: str | None = None  # the reason without a secret, when one is required
    rejected: Callable[[], httpx.Response] | None = None  # the API's 401
    rejected_says: str = ""
    rejected_reason: str = ""

    def route(self, api: respx.MockRouter) -> respx.Route:
        """The search route (no answer set yet), with the routes a success needs."""
        self.side_routes(api)
        return api.route(method=self.method, url=self.url)

    async def search(self, source: Source) -> list[Any]:
        return await source.search(self.question, self.intent, self.limit)


def github(sleep: Sleep, clock: FakeClock, secret: str | None) -> Source:
    return GitHubCodeSource(secret, sleep=sleep, clock=clock, wall_clock=lambda: WALL_NOW)


def github_issues(sleep: Sleep, clock: FakeClock, secret: str | None) -> Source:
    return GitHubIssuesSource(secret, sleep=sleep, clock=clock, wall_clock=lambda: WALL_NOW)


def stackexchange(sleep: Sleep, clock: FakeClock, secret: str | None) -> Source:
    now = datetime(2024, 5, 1, 23, 0, tzinfo=UTC)
    return StackOverflowSource(secret, sleep=sleep, clock=clock, now=lambda: now)


def tavily(sleep: Sleep, clock: FakeClock, secret: str | None) -> Source:
    policy = HttpPolicy(timeout=5.0, connect_timeout=1.0)
    return TavilyDocsSource(secret, policy=policy, sleep=sleep, clock=clock)


def no_side_routes(api: respx.MockRouter) -> None:
    pass


def issue_comments(api: respx.MockRouter) -> None:
    comments = GITHUB + "/repos/pandas-dev/pandas/issues/{}/comments"
    api.get(comments.format(53720)).respond(200, json=[])
    api.get(comments.format(52341)).respond(200, json=load("github/issue_comments.json"))


def stackexchange_answers(api: respx.MockRouter) -> None:
    answers = r"https://api\.stackexchange\.com/2\.3/questions/(?P<ids>[0-9;]+)/answers"
    api.get(url__regex=answers).respond(200, json=load("stackexchange/answers.json"))


def github_page(status: int, text: str) -> Callable[[], httpx.Response]:
    return lambda: httpx.Response(status, text=text)


GITHUB_ERROR = "AttributeError: 'DataFrame' object has no attribute 'append'"
SOURCES = [
    Online(
        name="github",
        build=github,
        method="GET",
        url=f"{GITHUB}/search/code",
        question="How do I use read_lines to strip the newline from each line in Python?",
        intent="learning",
        limit=5,
        results=3,
        secret=TOKEN,
        ok=json_reply(200, "github/search_code.json"),
        side_routes=no_side_routes,
        flaky=github_page(502, "<html><body>Bad gateway</body></html>"),
        down=github_page(503, "<html>Unicorn!</html>"),
        malformed=github_page(200, "<!DOCTYPE html><title>GitHub</title>"),
        client_error=json_reply(422, "github/validation_failed.json"),
        client_says="longer than 256 characters",
        timeout_says="timed out",
        unreachable_says="unreachable",
        echo=echo_authorization(500),
        echo_says="HTTP 500",
        redacted="Bearer ***",
        missing=NO_TOKEN,
        rejected=json_reply(401, "github/bad_credentials.json"),
        rejected_says="HTTP 401.*Bad credentials",
        rejected_reason="GITHUB_TOKEN rejected",
    ),
    Online(
        name="github_issues",
        build=github_issues,
        method="GET",
        url=f"{GITHUB}/search/issues",
        question=f"After upgrading pandas to 2.0 I get {GITHUB_ERROR}. How do I fix it?",
        intent="debugging",
        limit=5,
        results=3,
        secret=TOKEN,
        ok=json_reply(200, "github/search_issues.json"),
        side_routes=issue_comments,
        flaky=github_page(502, "<html><body>Bad gateway</body></html>"),
        down=github_page(503, "<html>Unicorn!</html>"),
        malformed=github_page(200, "<!DOCTYPE html><title>GitHub</title>"),
        client_error=json_reply(422, "github/validation_failed.json"),
        client_says="longer than 256 characters",
        timeout_says="timed out",
        unreachable_says="unreachable",
        echo=echo_authorization(500),
        echo_says="HTTP 500",
        redacted="Bearer ***",
        rejected=json_reply(401, "github/bad_credentials.json"),
        rejected_says=f"^{re.escape(TOKEN_REJECTED)}$",
        rejected_reason="GITHUB_TOKEN rejected",
    ),
    Online(
        name="stackoverflow",
        build=stackexchange,
        method="GET",
        url=f"{STACKEXCHANGE}/search/advanced",
        question="How do I read a large file line by line in Python without loading it?",
        intent="learning",
        limit=3,
        results=3,
        secret=SE_KEY,
        ok=json_reply(200, "stackexchange/search_advanced.json"),
        side_routes=stackexchange_answers,
        flaky=github_page(503, page("stackexchange/error_page.html")),
        down=github_page(503, page("stackexchange/error_page.html")),
        malformed=lambda: httpx.Response(
            200, text=page("stackexchange/error_page.html"), headers={"content-type": "text/html"}
        ),
        client_error=json_reply(400, "stackexchange/bad_parameter.json"),
        client_says=r"API error 400 bad_parameter: ids",
        timeout_says="timed out",
        unreachable_says="unreachable",
        echo=lambda request: httpx.Response(
            502, text=f"Bad gateway (key={request.url.params['key']})"
        ),
        echo_says="HTTP 502",
        redacted="***",
    ),
    Online(
        name="tavily_docs",
        build=tavily,
        method="POST",
        url="https://api.tavily.com/search",
        question="python asyncio gather",
        intent="learning",
        limit=5,
        results=3,
        secret=TAVILY_KEY,
        ok=json_reply(200, "tavily/search_success.json"),
        side_routes=no_side_routes,
        flaky=json_reply(500, "tavily/error_500.json"),
        down=lambda: httpx.Response(503, text="upstream"),
        malformed=lambda: httpx.Response(200, text=page("tavily/search_truncated.txt")),
        client_error=lambda: httpx.Response(
            400, json={"detail": {"error": "Query is too long. Max query length is 400."}}
        ),
        client_says="Tavily rejected the request.*Query is too long",
        timeout_says="timed out after 5s",
        unreachable_says="network unreachable",
        # A gateway that echoes the Authorization header back in its error body.
        echo=lambda request: httpx.Response(
            400,
            json={"detail": {"error": f"bad request for {request.headers['authorization']}"}},
        ),
        echo_says="Tavily rejected the request",
        redacted="Bearer ***",
        missing="TAVILY_API_KEY not set",
        rejected=json_reply(401, "tavily/error_401.json"),
        rejected_says="invalid TAVILY_API_KEY.*missing or invalid API key",
        rejected_reason="invalid TAVILY_API_KEY",
    ),
]
NEEDS_A_SECRET = [s for s in SOURCES if s.missing is not None]
CHECKS_THE_SECRET = [s for s in SOURCES if s.rejected is not None]
