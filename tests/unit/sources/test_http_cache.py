"""The HTTP cache of the online sources: what is kept, for how long, under which key."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from codeweaver.cli.app import app
from codeweaver.config import Settings
from codeweaver.sources.base import SourceError
from codeweaver.sources.http import HttpPolicy, HttpStatusError, SourceHttpClient
from codeweaver.sources.http_cache import CACHE_FILE, lifetime
from tests.fakes import FakeClock

BASE = "https://api.example.test"
KEY = "se-KEY0123456789abc"
TOKEN_A = "ghp_TOKENAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
TOKEN_B = "ghp_TOKENBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
HOUR = 3600.0

Reply = Callable[[httpx.Request, int], httpx.Response]


class Server:
    """A MockTransport handler that counts requests; each reply carries its request number."""

    def __init__(self, reply: Reply | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._reply = reply or (lambda request, n: httpx.Response(200, json={"n": n}))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._reply(request, len(self.requests))

    @property
    def count(self) -> int:
        return len(self.requests)


async def no_sleep(seconds: float) -> None:
    return None


def make_client(
    cache_dir: Path,
    server: Server,
    *,
    clock: FakeClock | None = None,
    hours: float = 24.0,
    headers: dict[str, str] | None = None,
    secrets: tuple[str, ...] = (),
    hook: Callable[[httpx.Response], Any] | None = None,
) -> SourceHttpClient:
    policy = HttpPolicy(
        retries=0, failures_to_open=100, cache_dir=cache_dir, cache_seconds=hours * HOUR
    )
    return SourceHttpClient(
        "example",
        base_url=BASE,
        headers=headers,
        secrets=secrets,
        policy=policy,
        transport=httpx.MockTransport(server),
        sleep=no_sleep,
        wall_clock=clock or FakeClock(1_700_000_000.0),
        response_hook=hook,
    )


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "http"


@pytest.fixture
def wall() -> FakeClock:
    return FakeClock(1_700_000_000.0)


# -- what is kept -------------------------------------------------------------------------


async def test_second_identical_get_is_answered_from_disk(cache_dir: Path) -> None:
    server = Server()
    http = make_client(cache_dir, server)
    first = await http.get_json("/q", {"a": 1})
    second = await http.get_json("/q", {"a": 1})
    await http.aclose()
    assert first == second == {"n": 1}
    assert server.count == 1
    # On disk: another client (another process) is answered too.
    other = make_client(cache_dir, server)
    assert await other.get_json("/q", {"a": 1}) == {"n": 1}
    await other.aclose()
    assert server.count == 1
    assert (cache_dir / CACHE_FILE).is_file()


async def test_a_cached_answer_passes_the_response_hook(cache_dir: Path) -> None:
    seen: list[tuple[int, str | None, bool]] = []

    async def hook(response: httpx.Response) -> None:
        caching = response.extensions.get("caching") or {}
        remaining = response.headers.get("x-ratelimit-remaining")
        seen.append((response.status_code, remaining, bool(caching.get("from_cache"))))

    server = Server(
        lambda request, n: httpx.Response(
            200, json={"n": n}, headers={"x-ratelimit-remaining": "9"}
        )
    )
    http = make_client(cache_dir, server, hook=hook)
    await http.get_json("/q")
    await http.get_json("/q")
    await http.aclose()
    assert server.count == 1
    assert seen == [(200, "9", False), (200, "9", True)]


async def test_an_entry_older_than_the_lifetime_is_not_served(
    cache_dir: Path, wall: FakeClock
) -> None:
    server = Server()
    http = make_client(cache_dir, server, clock=wall, hours=1.0)
    assert await http.get_json("/q") == {"n": 1}
    wall.now += HOUR - 1
    assert await http.get_json("/q") == {"n": 1}
    assert server.count == 1
    wall.now += 2  # one second past the hour
    assert await http.get_json("/q") == {"n": 2}
    assert server.count == 2
    # The fresh answer replaced the stale one.
    assert await http.get_json("/q") == {"n": 2}
    assert server.count == 2
    await http.aclose()


def throttle_429(request: httpx.Request, n: int) -> httpx.Response:
    return httpx.Response(429, json={"n": n})


def error_500(request: httpx.Request, n: int) -> httpx.Response:
    return httpx.Response(500, text="boom")


def bad_request_400(request: httpx.Request, n: int) -> httpx.Response:
    return httpx.Response(400, json={"error_id": 400, "error_name": "bad_parameter"})


@pytest.mark.parametrize("reply", [throttle_429, error_500, bad_request_400])
async def test_error_responses_are_not_cached(cache_dir: Path, reply: Reply) -> None:
    server = Server(reply)
    http = make_client(cache_dir, server)
    for _ in range(2):
        with pytest.raises(HttpStatusError):
            await http.get_json("/q")
    await http.aclose()
    assert server.count == 2


@pytest.mark.parametrize(
    "reply",
    [
        # Stack Exchange's throttles ride on a 200: replaying them would re-block the source.
        lambda request, n: httpx.Response(200, json={"items": [], "backoff": 10}),
        lambda request, n: httpx.Response(200, json={"items": [], "quota_remaining": 0}),
        lambda request, n: httpx.Response(200, json={}, headers={"x-ratelimit-remaining": "0"}),
    ],
    ids=["backoff", "quota-used-up", "github-limit-used-up"],
)
async def test_successes_that_carry_a_throttle_are_not_cached(
    cache_dir: Path, reply: Reply
) -> None:
    server = Server(reply)
    http = make_client(cache_dir, server)
    await http.get_json("/q")
    await http.get_json("/q")
    await http.aclose()
    assert server.count == 2


async def test_a_body_that_is_not_json_is_not_cached(cache_dir: Path) -> None:
    server = Server(lambda request, n: httpx.Response(200, text="<html>maintenance</html>"))
    http = make_client(cache_dir, server)
    for _ in range(2):
        with pytest.raises(SourceError, match="malformed JSON"):
            await http.get_json("/q")
    await http.aclose()
    assert server.count == 2


async def test_posts_are_not_cached(cache_dir: Path) -> None:
    server = Server()
    http = make_client(cache_dir, server)
    assert await http.post_json("/search", {"query": "x"}) == {"n": 1}
    assert await http.post_json("/search", {"query": "x"}) == {"n": 2}
    await http.aclose()
    assert server.count == 2


# -- the server's own cache headers -------------------------------------------------------


async def test_no_store_from_the_server_is_honoured(cache_dir: Path) -> None:
    server = Server(
        lambda request, n: httpx.Response(
            200, json={"n": n}, headers={"Cache-Control": "private, no-store"}
        )
    )
    http = make_client(cache_dir, server)
    assert await http.get_json("/q") == {"n": 1}
    assert await http.get_json("/q") == {"n": 2}
    await http.aclose()
    assert server.count == 2


async def test_a_shorter_max_age_wins(cache_dir: Path, wall: FakeClock) -> None:
    server = Server(
        lambda request, n: httpx.Response(
            200, json={"n": n}, headers={"Cache-Control": "private, max-age=60"}
        )
    )
    http = make_client(cache_dir, server, clock=wall)
    await http.get_json("/q")
    wall.now += 59
    assert await http.get_json("/q") == {"n": 1}
    wall.now += 2
    assert await http.get_json("/q") == {"n": 2}
    await http.aclose()
    assert server.count == 2


def test_lifetime_from_headers() -> None:
    day = 24 * HOUR
    now = 1_700_000_000.0

    def kept(headers: dict[str, str]) -> float:
        return lifetime(httpx.Headers(headers), day, now)

    assert kept({}) == day
    assert kept({"Cache-Control": "private"}) == day
    assert kept({"Cache-Control": "no-cache"}) == day  # revalidation is not done: see lifetime
    assert kept({"Cache-Control": "max-age=60"}) == 60
    assert kept({"Cache-Control": "max-age=999999"}) == day  # longer than configured: ours
    assert kept({"Cache-Control": "max-age=0"}) == 0
    assert kept({"Cache-Control": "public, no-store"}) == 0
    assert kept({"Cache-Control": "max-age=soon"}) == 0
    date = "Tue, 14 Nov 2023 22:13:20 GMT"  # == now
    assert kept({"Date": date, "Expires": "Tue, 14 Nov 2023 22:15:20 GMT"}) == 120
    assert kept({"Date": date, "Expires": "0"}) == 0  # invalid: already expired
    # max-age wins over Expires.
    assert kept({"Cache-Control": "max-age=30", "Expires": "Tue, 14 Nov 2023 22:15:20 GMT"}) == 30


# -- keys and secrets ---------------------------------------------------------------------


async def test_different_query_params_are_different_entries(cache_dir: Path) -> None:
    server = Server()
    http = make_client(cache_dir, server)
    assert await http.get_json("/q", {"a": 1}) == {"n": 1}
    assert await http.get_json("/q", {"a": 2}) == {"n": 2}
    assert await http.get_json("/r", {"a": 1}) == {"n": 3}
    assert await http.get_json("/q", {"a": 1}) == {"n": 1}
    assert await http.get_json("/q", {"a": 2}) == {"n": 2}
    # The same parameters in another order are the same request.
    assert await http.get_json("/q", {"a": 1, "b": 2}) == {"n": 4}
    assert await http.get_json("/q", {"b": 2, "a": 1}) == {"n": 4}
    await http.aclose()
    assert server.count == 4


async def test_an_answer_for_one_token_is_not_served_to_another(cache_dir: Path) -> None:
    def reply(request: httpx.Request, n: int) -> httpx.Response:
        return httpx.Response(200, json={"auth": request.headers.get("authorization")})

    server = Server(reply)
    clients = {
        token: make_client(
            cache_dir,
            server,
            headers={"Authorization": f"Bearer {token}"},
            secrets=(token,),
        )
        for token in (TOKEN_A, TOKEN_B)
    }
    assert await clients[TOKEN_A].get_json("/search/code") == {"auth": f"Bearer {TOKEN_A}"}
    assert await clients[TOKEN_B].get_json("/search/code") == {"auth": f"Bearer {TOKEN_B}"}
    assert await clients[TOKEN_A].get_json("/search/code") == {"auth": f"Bearer {TOKEN_A}"}
    for http in clients.values():
        await http.aclose()
    assert server.count == 2


async def test_keys_and_tokens_are_not_written_to_disk(cache_dir: Path) -> None:
    server = Server()
    http = make_client(
        cache_dir,
        server,
        headers={"Authorization": f"Bearer {TOKEN_A}"},
        secrets=(KEY, TOKEN_A),
    )
    assert await http.get_json("/search", {"q": "x", "key": KEY}) == {"n": 1}
    assert await http.get_json("/search", {"q": "x", "key": KEY}) == {"n": 1}
    await http.aclose()
    assert server.count == 1
    files = [path for path in cache_dir.rglob("*") if path.is_file()]
    assert any(path.name == CACHE_FILE for path in files)
    for path in files:
        for secret in (KEY, TOKEN_A):
            assert secret not in str(path)
            assert secret.encode() not in path.read_bytes()


# -- a broken cache never breaks a source -------------------------------------------------


async def test_an_unusable_cache_file_only_turns_the_cache_off(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_dir.mkdir()
    with sqlite3.connect(cache_dir / CACHE_FILE) as foreign:
        foreign.execute("CREATE TABLE entries (something TEXT)")
    server = Server()
    http = make_client(cache_dir, server)
    assert await http.get_json("/q") == {"n": 1}
    assert await http.get_json("/q") == {"n": 2}
    await http.aclose()
    assert server.count == 2
    assert "HTTP cache disabled" in caplog.text


async def test_an_unwritable_cache_dir_only_turns_the_cache_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    server = Server()
    http = make_client(blocker / "http", server)
    assert await http.get_json("/q") == {"n": 1}
    assert await http.get_json("/q") == {"n": 2}
    await http.aclose()
    assert server.count == 2
    # Said once, as a warning, not as a traceback per request.
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "HTTP cache off" in caplog.records[0].getMessage()


# -- settings and the command -------------------------------------------------------------


def test_policy_from_settings_carries_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    assert HttpPolicy().cache_dir is None
    on = HttpPolicy.from_settings(Settings(cache_dir=tmp_path, http_cache_hours=2))
    assert on.cache_dir == tmp_path / "http"
    assert on.cache_seconds == 2 * HOUR
    off = HttpPolicy.from_settings(Settings(cache_dir=tmp_path, http_cache=False))
    assert off.cache_dir is None


def test_sources_built_from_settings_use_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codeweaver.sources.github import GitHubCodeSource
    from codeweaver.sources.stackoverflow import StackOverflowSource

    monkeypatch.chdir(tmp_path)
    settings = Settings(cache_dir=tmp_path, github_token=SecretStr(TOKEN_A))
    assert GitHubCodeSource.from_settings(settings).client.policy.cache_dir == tmp_path / "http"
    assert StackOverflowSource.from_settings(settings).client.policy.cache_dir == tmp_path / "http"


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEWEAVER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CODEWEAVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path / "cache" / "http"


async def test_cache_clear_http_empties_the_cache(cli_env: Path) -> None:
    server = Server()
    http = make_client(cli_env, server)
    await http.get_json("/q", {"a": 1})
    await http.get_json("/q", {"a": 2})
    await http.aclose()
    assert server.count == 2
    size = sum(path.stat().st_size for path in cli_env.glob(f"{CACHE_FILE}*"))

    result = CliRunner().invoke(app, ["cache", "clear", "--http"])

    assert result.exit_code == 0, result.output
    assert f"removed 2 cached HTTP responses ({size} bytes)" in result.output
    assert not list(cli_env.glob(f"{CACHE_FILE}*"))
    http = make_client(cli_env, server)
    assert await http.get_json("/q", {"a": 1}) == {"n": 3}
    await http.aclose()
    assert server.count == 3


def test_cache_clear_http_without_a_cache_is_not_an_error(cli_env: Path) -> None:
    result = CliRunner().invoke(app, ["cache", "clear", "--http"])
    assert result.exit_code == 0, result.output
    assert "removed 0 cached HTTP responses (0 bytes)" in result.output
    assert not cli_env.exists()


def test_cache_clear_without_http_still_clears_answers_only(cli_env: Path) -> None:
    cli_env.mkdir(parents=True)
    (cli_env / CACHE_FILE).write_bytes(b"kept")
    result = CliRunner().invoke(app, ["cache", "clear"])
    assert result.exit_code == 0, result.output
    assert "removed 0 entries" in result.output
    assert (cli_env / CACHE_FILE).read_bytes() == b"kept"
