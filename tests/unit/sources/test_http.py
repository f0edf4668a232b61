"""The shared HTTP layer: retries, Retry-After, no retry on client errors, breaker, redaction."""

from __future__ import annotations

import time

import httpx
import pytest
import respx

from codeweaver.sources.base import SourceError
from codeweaver.sources.http import (
    HttpPolicy,
    SourceHttpClient,
    SourceUnavailable,
    retry_after_seconds,
)

BASE = "https://api.example.test"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def client(sleeps: Sleeps, secret: str | None = None, **policy: float) -> SourceHttpClient:
    return SourceHttpClient(
        "example",
        base_url=BASE,
        secrets=[secret],
        sleep=sleeps,
        policy=HttpPolicy(**policy),  # type: ignore[arg-type]
    )


async def test_retries_5xx_then_succeeds(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.get(f"{BASE}/q").mock(
        side_effect=[httpx.Response(503), httpx.Response(502), httpx.Response(200, json={"ok": 1})]
    )
    sleeps = Sleeps()
    assert await client(sleeps).get_json("/q") == {"ok": 1}
    assert route.call_count == 3
    assert len(sleeps.calls) == 2
    assert all(0 <= s <= 8 for s in sleeps.calls)


async def test_honours_retry_after_seconds(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "3"}),
            httpx.Response(200, json=[1]),
        ]
    )
    sleeps = Sleeps()
    assert await client(sleeps).get_json("/q") == [1]
    assert sleeps.calls == [3.0]


async def test_too_long_retry_after_is_a_failure_not_a_wait(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(
        return_value=httpx.Response(429, headers={"Retry-After": "3600"})
    )
    sleeps = Sleeps()
    with pytest.raises(SourceError, match="HTTP 429"):
        await client(sleeps).get_json("/q")
    assert sleeps.calls == []


async def test_client_errors_are_not_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.get(f"{BASE}/q").mock(return_value=httpx.Response(404, text="not here"))
    sleeps = Sleeps()
    with pytest.raises(SourceError, match="HTTP 404 from example: not here"):
        await client(sleeps).get_json("/q")
    assert route.call_count == 1 and sleeps.calls == []


async def test_github_style_403_rate_limit_is_retried(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(
        side_effect=[
            httpx.Response(403, headers={"retry-after": "1"}),
            httpx.Response(200, json={}),
        ]
    )
    sleeps = Sleeps()
    assert await client(sleeps).get_json("/q") == {}
    assert sleeps.calls == [1.0]


async def test_breaker_opens_after_repeated_failures(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.get(f"{BASE}/q").mock(return_value=httpx.Response(500))
    http = client(Sleeps(), retries=1, failures_to_open=2)
    for _ in range(2):
        with pytest.raises(SourceError):
            await http.get_json("/q")
    calls = route.call_count
    with pytest.raises(SourceUnavailable, match="skipped after 2 failures"):
        await http.get_json("/q")
    assert route.call_count == calls  # no request while the breaker is open


async def test_connect_error_fails_fast_without_retry(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.get(f"{BASE}/q").mock(side_effect=httpx.ConnectError("unreachable"))
    sleeps = Sleeps()
    started = time.perf_counter()
    with pytest.raises(SourceUnavailable, match="network unreachable"):
        await client(sleeps).get_json("/q")
    assert time.perf_counter() - started < 0.5
    assert route.call_count == 1 and sleeps.calls == []


async def test_malformed_json_is_a_clear_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(return_value=httpx.Response(200, text="<html>oops</html>"))
    with pytest.raises(SourceError, match="malformed JSON"):
        await client(Sleeps()).get_json("/q")


async def test_timeouts_are_retried_then_reported(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(side_effect=httpx.ReadTimeout("slow"))
    sleeps = Sleeps()
    with pytest.raises(SourceError, match="timed out"):
        await client(sleeps, retries=1).get_json("/q")
    assert len(sleeps.calls) == 1


async def test_secrets_never_leak_into_errors(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(f"{BASE}/q").mock(
        return_value=httpx.Response(401, text="bad credentials for token ghp_SECRET123")
    )
    with pytest.raises(SourceError) as caught:
        await client(Sleeps(), secret="ghp_SECRET123").get_json("/q", {"key": "ghp_SECRET123"})
    assert "ghp_SECRET123" not in str(caught.value)
    assert "***" in str(caught.value)


async def test_block_skips_without_io() -> None:
    http = client(Sleeps())
    http.block(60, "backing off for 60 s as the server asked")
    with pytest.raises(SourceUnavailable, match="backing off"):
        await http.get_json("/never-called")


def test_retry_after_http_date() -> None:
    response = httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"})
    now = 1445412480.0  # 07:28:00 that day
    assert retry_after_seconds(response, now=now) == pytest.approx(10.0)
    assert retry_after_seconds(httpx.Response(503)) is None
