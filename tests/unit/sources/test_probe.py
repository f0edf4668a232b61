"""`probe` and `classify` against real HTTP servers on 127.0.0.1 speaking each API's shapes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from pydantic import SecretStr

from codeweaver.agent.state import Intent, SearchResult
from codeweaver.config import Settings
from codeweaver.sources.base import SourceError, SourceStatus, source_info
from codeweaver.sources.calling import classify
from codeweaver.sources.github import GitHubCodeSource
from codeweaver.sources.http import HttpPolicy, HttpStatusError, SourceUnavailable
from codeweaver.sources.probe import probe, probe_sources
from codeweaver.sources.stackoverflow import StackOverflowSource
from codeweaver.sources.tavily_docs import TavilyDocsSource

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NO_RETRY = HttpPolicy(timeout=2.0, connect_timeout=1.0, retries=0)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def query_of(source: str) -> str:
    """The query `doctor --live` checks `source` with, as the source declares it."""
    query = source_info(source).probe_query
    assert query, f"{source} declares no probe query"
    return query


@dataclass(frozen=True)
class Reply:
    """What the loopback answers on one path: status, headers, body, after `delay` s."""

    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    params: dict[str, list[str]]
    body: bytes


class Loopback:
    """An HTTP server on a free 127.0.0.1 port; routes are path prefixes (longest wins)."""

    def __init__(self, routes: dict[str, Reply]) -> None:
        self.routes = routes
        self.seen: list[Seen] = []
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                loopback.seen.append(Seen(self.command, parts.path, parse_qs(parts.query), body))
                matches = [p for p in loopback.routes if parts.path.startswith(p)]
                reply = (
                    loopback.routes[max(matches, key=len)]
                    if matches
                    else Reply(b'{"message": "Not Found"}', status=404)
                )
                time.sleep(reply.delay)
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (the timeout tests)
                    self.wfile.write(reply.body)

            do_GET = _answer
            do_POST = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True  # a sleeping handler must not hold up shutdown
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


@contextmanager
def serve(routes: dict[str, Reply]) -> Iterator[Loopback]:
    loopback = Loopback(routes)
    thread = threading.Thread(target=loopback.server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield loopback
    finally:
        loopback.server.shutdown()
        loopback.server.server_close()


def stackexchange_ok() -> dict[str, Reply]:
    return {
        "/search/advanced": Reply(fixture("stackexchange/search_advanced.json")),
        "/questions/": Reply(fixture("stackexchange/answers.json")),
    }


def github_ok() -> dict[str, Reply]:
    limits = {"x-ratelimit-limit": "10", "x-ratelimit-remaining": "9"}
    return {"/search/code": Reply(fixture("github/search_code.json"), headers=limits)}


class ToLoopback(httpx.AsyncBaseTransport):
    """Real HTTP, with every request sent to the loopback (Tavily's URL is a constant)."""

    def __init__(self, url: str) -> None:
        self._target = httpx.URL(url)
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(
            scheme=self._target.scheme, host=self._target.host, port=self._target.port
        )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class RaisingSource:
    """A source whose search fails (or hangs) as told; stands in for `web` (ddgs)."""

    name = "web"

    def __init__(self, error: Exception | None = None, delay: float = 0.0) -> None:
        self.error = error
        self.delay = delay

    def status(self) -> SourceStatus:
        return SourceStatus("ready")

    async def search(self, query: str, intent: Intent, limit: int) -> list[SearchResult]:
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return []


# -- successes ----------------------------------------------------------------------------


async def test_stackoverflow_ok_reports_latency_count_and_quota() -> None:
    with serve(stackexchange_ok()) as api:
        source = StackOverflowSource(base_url=api.url, policy=NO_RETRY)
        report = await probe(source, query_of("stackoverflow"), timeout=5)
        await source.aclose()
    assert report.ok and report.result == "ok"
    assert report.results == 3
    assert report.quota_left == "286 of 300 requests today"  # from the last answer
    assert report.latency is not None and 0 < report.latency < 5
    assert report.kind is None and report.reason == ""
    assert api.paths()[0] == "/search/advanced"
    assert api.seen[0].params["q"] == ["list comprehension"]  # "python" travels as the tag


async def test_github_fixed_query_really_searches() -> None:
    with serve(github_ok()) as api:
        source = GitHubCodeSource("test-token", base_url=api.url, policy=NO_RETRY)
        report = await probe(source, query_of("github"), timeout=5)
        await source.aclose()
    assert report.ok
    assert report.results == 3
    assert report.quota_left == "9 of 10 searches this minute"
    # A query without an identifier would build no search and "succeed" without a request.
    assert api.paths() == ["/search/code"]
    assert api.seen[0].params["q"] == ["json.loads language:python"]


async def test_tavily_ok_over_loopback() -> None:
    with serve({"/search": Reply(fixture("tavily/search_success.json"))}) as api:
        source = TavilyDocsSource("tvly-test", policy=NO_RETRY, transport=ToLoopback(api.url))
        report = await probe(source, query_of("tavily_docs"), timeout=5)
        await source.aclose()
    assert report.ok and report.results == 3
    assert report.quota_left is None  # Tavily reports no quota
    sent = json.loads(api.seen[0].body)
    assert sent["query"] == "python json.loads"
    assert sent["include_domains"] == ["docs.python.org"]


async def test_no_results_is_ok_but_said() -> None:
    report = await probe(RaisingSource(), "anything", timeout=1)
    assert report.ok and report.results == 0
    assert report.reason == "answered, but with no results"


# -- failures -----------------------------------------------------------------------------


async def test_github_bad_key() -> None:
    routes = {"/search/code": Reply(fixture("github/bad_credentials.json"), status=401)}
    with serve(routes) as api:
        source = GitHubCodeSource("wrong-token", base_url=api.url, policy=NO_RETRY)
        report = await probe(source, query_of("github"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "auth"
    assert report.reason.startswith("bad key: HTTP 401 from github")
    assert "Bad credentials" in report.reason
    assert "wrong-token" not in report.reason
    assert len(api.seen) == 1  # a rejected key is not retried


async def test_github_primary_rate_limit() -> None:
    headers = {
        "x-ratelimit-limit": "10",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": str(int(time.time()) + 3600),
    }
    routes = {
        "/search/code": Reply(fixture("github/primary_rate_limit.json"), 403, headers=headers)
    }
    with serve(routes) as api:
        source = GitHubCodeSource("test-token", base_url=api.url, policy=HttpPolicy(retries=2))
        report = await probe(source, query_of("github"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "rate_limited"
    assert report.reason.startswith("rate-limited: ")
    assert "rate limit used up; resets in" in report.reason
    assert report.quota_left == "0 of 10 searches this minute"
    assert len(api.seen) == 1  # waiting cannot help before the reset: no retry


async def test_stackexchange_throttle_violation() -> None:
    routes = {
        "/search/advanced": Reply(fixture("stackexchange/throttle_violation.json"), status=400)
    }
    with serve(routes) as api:
        source = StackOverflowSource(base_url=api.url, policy=NO_RETRY)
        report = await probe(source, query_of("stackoverflow"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "throttled"
    assert report.reason.startswith("throttled: ")
    assert "77316" in report.reason and "throttle_violation" in report.reason


async def test_tavily_bad_key() -> None:
    with serve({"/search": Reply(fixture("tavily/error_401.json"), status=401)}) as api:
        source = TavilyDocsSource("tvly-wrong", policy=NO_RETRY, transport=ToLoopback(api.url))
        report = await probe(source, query_of("tavily_docs"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "auth"
    assert "invalid TAVILY_API_KEY" in report.reason
    assert "tvly-wrong" not in report.reason


async def test_server_slower_than_http_timeout() -> None:
    routes = {"/search/advanced": Reply(fixture("stackexchange/search_advanced.json"), delay=2)}
    with serve(routes) as api:
        policy = HttpPolicy(timeout=0.3, connect_timeout=0.3, retries=0)
        source = StackOverflowSource(base_url=api.url, policy=policy)
        report = await probe(source, query_of("stackoverflow"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "timeout"
    assert report.reason.startswith("timeout: timed out after 0.3s")
    assert report.latency is not None and 0.3 <= report.latency < 1.5


async def test_overall_deadline() -> None:
    report = await probe(RaisingSource(delay=5), "anything", timeout=0.2)
    assert report.failed and report.kind == "timeout"
    assert report.reason == "timeout: timed out after 0.2s"
    assert report.latency is not None and report.latency < 1


async def test_dns_failure() -> None:
    # `.invalid` never resolves (RFC 2606); the deadline bounds a resolver that hangs.
    policy = HttpPolicy(timeout=1.0, connect_timeout=1.0, retries=0)
    source = StackOverflowSource(base_url="http://codeweaver-nonexistent.invalid", policy=policy)
    report = await probe(source, query_of("stackoverflow"), timeout=3)
    await source.aclose()
    assert report.failed and report.kind == "dns"
    assert report.reason.startswith("DNS failure: host name does not resolve")


async def test_tls_failure() -> None:
    with serve(stackexchange_ok()) as api:
        # The loopback speaks plain HTTP: a TLS handshake with it fails.
        url = api.url.replace("http://", "https://")
        source = StackOverflowSource(base_url=url, policy=NO_RETRY)
        report = await probe(source, query_of("stackoverflow"), timeout=5)
        await source.aclose()
    assert report.failed and report.kind == "tls"
    assert report.reason.startswith("TLS failure: ")


async def test_web_throttled_by_kind() -> None:
    source = RaisingSource(SourceError("web search got no answer", kind="throttled"))
    report = await probe(source, query_of("web"), timeout=1)
    assert report.failed and report.kind == "throttled"
    assert report.reason == "throttled: web search got no answer"
    assert report.quota_left is None and report.results is None


# -- classify -----------------------------------------------------------------------------


def _caused(error: Exception, cause: BaseException) -> Exception:
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (HttpStatusError("HTTP 401 from x", 401, kind="http"), "http"),  # declared kind wins
        (SourceError("x", kind="bad_response"), "bad_response"),
        (SourceError("no kind"), None),
        (
            _caused(
                SourceError("failed"),
                httpx.ConnectError("[Errno -2] Name or service not known"),
            ),
            "dns",
        ),
        (_caused(SourceError("failed"), httpx.ConnectError("nodename nor servname")), "dns"),
        (_caused(SourceError("failed"), ssl.SSLError("certificate verify failed")), "tls"),
        (_caused(SourceError("failed"), httpx.ReadTimeout("read")), "timeout"),
        (SourceError("github GitHub rate limit used up; resets in 60s"), "rate_limited"),
        (SourceError("Tavily plan usage limit exceeded (HTTP 432)"), "rate_limited"),
        (SourceError("stackoverflow throttled by the Stack Exchange API"), "throttled"),
        (SourceError("Temporary failure in name resolution"), "dns"),
        (SourceUnavailable("web search: network unreachable (ConnectError)"), "network"),
        (SourceError("web search timed out after 8s"), "timeout"),
        (SourceError("HTTP 503 from github: unavailable"), "http"),
    ],
)
def test_classify_kind(error: Exception, kind: str | None) -> None:
    assert classify(error)[0] == kind


def test_classify_status_without_kind() -> None:
    error = HttpStatusError("HTTP 429 from x: slow down", 429)
    error.kind = None
    assert classify(error) == ("rate_limited", "rate-limited: HTTP 429 from x: slow down")
    error = HttpStatusError("HTTP 401 from x", 401)
    error.kind = None
    assert classify(error)[0] == "auth"


def test_classify_names_an_unexpected_exception() -> None:
    assert classify(KeyError("items")) == (None, "error: KeyError: 'items'")


def test_classify_reraised_with_better_text_keeps_the_kind() -> None:
    # Like tavily_docs: `raise SourceError(readable) from None` inside `except`.
    try:
        try:
            raise HttpStatusError("HTTP 401 from tavily_docs", 401, kind="auth")
        except SourceError:
            raise SourceError("readable headline") from None
    except SourceError as exc:
        assert classify(exc) == ("auth", "bad key: readable headline")


# -- probe_sources ------------------------------------------------------------------------


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("GITHUB_TOKEN", "TAVILY_API_KEY", "STACKEXCHANGE_KEY", "CODEWEAVER_SOURCES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path


async def test_probe_sources_skips_keyless_disabled_and_offline(clean_env: Path) -> None:
    with serve(stackexchange_ok()) as api:
        settings = Settings(
            data_dir=clean_env / "data",
            cache_dir=clean_env / "cache",
            enabled_sources="stackoverflow,github,tavily_docs,installed_docs",
            stackexchange_url=api.url,
            http_cache=True,
        )
        first = await probe_sources(settings)
        second = await probe_sources(settings)
    by_name = {r.source: r for r in first}
    # No offline ones; github_issues needs no key but is not enabled here.
    assert list(by_name) == ["github", "github_issues", "stackoverflow", "tavily_docs", "web"]
    assert by_name["github_issues"].result == "disabled"
    assert by_name["stackoverflow"].ok and by_name["stackoverflow"].results == 3
    assert by_name["github"].result == "not configured"
    assert by_name["github"].reason == "GITHUB_TOKEN not set"
    assert by_name["tavily_docs"].result == "not configured"
    assert by_name["tavily_docs"].reason == "TAVILY_API_KEY not set"
    assert by_name["web"].result == "disabled"
    assert not any(r.failed for r in first)
    assert next(r for r in second if r.source == "stackoverflow").ok
    # The HTTP cache is bypassed: the second check asked the server again.
    assert api.paths().count("/search/advanced") == 2


async def test_probe_sources_reports_a_failing_configured_source(clean_env: Path) -> None:
    routes = {"/search/code": Reply(fixture("github/bad_credentials.json"), status=401)}
    with serve(routes) as api:
        settings = Settings(
            data_dir=clean_env / "data",
            cache_dir=clean_env / "cache",
            enabled_sources="github",
            github_api_url=api.url,
            github_token=SecretStr("test"),
        )
        reports = await probe_sources(settings, timeout=5)
    github = next(r for r in reports if r.source == "github")
    assert github.failed and github.kind == "auth"
    assert github.query == query_of("github")
