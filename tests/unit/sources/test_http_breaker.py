"""The breaker counts connect failures like others; errors keep their kind and their cause."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable

import httpx
import pytest

from codeweaver.sources.base import FailureKind, SourceError
from codeweaver.sources.http import (
    HttpPolicy,
    HttpStatusError,
    SourceHttpClient,
    SourceUnavailable,
    connect_kind,
)
from tests.fakes import FakeClock

BASE = "https://api.example.test"
KEY = "se-KEY0123456789abc"

Handler = Callable[[httpx.Request], httpx.Response]


class Server:
    """Raises or answers, in turn, what the test lists (the last one repeats); counts calls."""

    def __init__(self, *steps: httpx.Response | Exception) -> None:
        self.steps = list(steps)
        self.count = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        step = self.steps[min(self.count, len(self.steps) - 1)]
        self.count += 1
        if isinstance(step, Exception):
            raise step
        return step


def make_client(
    server: Server, sleeps: list[float], clock: FakeClock | None = None, retries: int = 2
) -> SourceHttpClient:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return SourceHttpClient(
        "example",
        base_url=BASE,
        secrets=[KEY],
        policy=HttpPolicy(retries=retries),  # failures_to_open=2, no cache
        transport=httpx.MockTransport(server),
        sleep=sleep,
        clock=clock or FakeClock(),
    )


def dns_error() -> httpx.ConnectError:
    return httpx.ConnectError("[Errno -2] Name or service not known")


# -- the breaker --------------------------------------------------------------------------


async def test_one_connect_failure_does_not_block_the_source() -> None:
    server = Server(dns_error(), httpx.Response(200, json={"ok": True}))
    sleeps: list[float] = []
    http = make_client(server, sleeps)

    with pytest.raises(SourceUnavailable):
        await http.get_json("/q")
    assert server.count == 1 and sleeps == []  # not retried inside the request
    assert http.blocked_reason is None

    assert await http.get_json("/q") == {"ok": True}
    assert server.count == 2


async def test_two_consecutive_connect_failures_block_the_source() -> None:
    server = Server(dns_error())
    clock = FakeClock()
    http = make_client(server, [], clock)
    for _ in range(2):
        with pytest.raises(SourceUnavailable, match="host name does not resolve"):
            await http.get_json("/q")
    assert server.count == 2
    assert http.blocked_reason is not None
    assert "skipped after 2 failures: host name does not resolve" in http.blocked_reason

    with pytest.raises(SourceUnavailable, match="skipped after 2 failures"):
        await http.get_json("/q")
    assert server.count == 2  # no request while the breaker is open
    clock.now += http.policy.cooldown + 1
    assert http.blocked_reason is None


async def test_a_success_between_connect_failures_resets_the_count() -> None:
    ok = httpx.Response(200, json={})
    server = Server(dns_error(), ok, dns_error(), ok)
    http = make_client(server, [])
    with pytest.raises(SourceUnavailable):
        await http.get_json("/q")
    await http.get_json("/q")
    with pytest.raises(SourceUnavailable):
        await http.get_json("/q")
    assert http.blocked_reason is None
    assert await http.get_json("/q") == {}
    assert server.count == 4


# -- kinds and causes ---------------------------------------------------------------------


def gaierror_wrapped() -> httpx.ConnectError:
    try:
        try:
            raise socket.gaierror(-3, "lookup failed")
        except socket.gaierror as inner:
            raise httpx.ConnectError("connection failed") from inner
    except httpx.ConnectError as exc:
        return exc


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (httpx.ConnectError("[Errno -2] Name or service not known"), "dns"),
        (httpx.ConnectError("[Errno -3] Temporary failure in name resolution"), "dns"),
        (httpx.ConnectError("[Errno 8] nodename nor servname provided, or not known"), "dns"),
        (httpx.ConnectError("[Errno 11001] getaddrinfo failed"), "dns"),
        (gaierror_wrapped(), "dns"),
        (
            httpx.ConnectError(
                "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                "self-signed certificate (_ssl.c:1006)"
            ),
            "tls",
        ),
        (httpx.ConnectTimeout("timed out"), "timeout"),
        (httpx.ConnectError("All connection attempts failed"), "network"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "network"),
    ],
)
async def test_connect_failures_say_why_and_keep_their_cause(
    error: httpx.ConnectError, kind: FailureKind
) -> None:
    server = Server(error)
    http = make_client(server, [])
    with pytest.raises(SourceUnavailable) as caught:
        await http.get_json("/q")
    assert caught.value.kind == kind
    assert caught.value.__cause__ is error
    assert server.count == 1


def test_connect_kind_of_a_plain_connect_error_is_network() -> None:
    assert connect_kind(httpx.ConnectError("")) == "network"


async def test_timeouts_are_timeout_with_the_last_timeout_as_cause() -> None:
    first, last = httpx.ReadTimeout("slow"), httpx.ReadTimeout("still slow")
    server = Server(first, last)
    sleeps: list[float] = []
    http = make_client(server, sleeps, retries=1)
    with pytest.raises(SourceError, match="timed out") as caught:
        await http.get_json("/q")
    assert caught.value.kind == "timeout"
    assert caught.value.__cause__ is last
    assert server.count == 2 and len(sleeps) == 1


async def test_other_transport_errors_are_network_and_redacted() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError(f"connection reset while reading {request.url}")

    http = SourceHttpClient(
        "example",
        base_url=BASE,
        secrets=[KEY],
        policy=HttpPolicy(retries=0),
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(SourceError) as caught:
        await http.get_json("/q", {"key": KEY})
    assert caught.value.kind == "network"
    assert isinstance(caught.value.__cause__, httpx.ReadError)
    assert KEY not in str(caught.value) and "***" in str(caught.value)


async def test_a_connect_error_message_never_carries_the_url() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {request.url}")

    http = SourceHttpClient(
        "example",
        base_url=BASE,
        secrets=[KEY],
        policy=HttpPolicy(),
        transport=httpx.MockTransport(handler),
    )
    with pytest.raises(SourceUnavailable) as caught:
        await http.get_json("/q", {"key": KEY})
    assert KEY not in str(caught.value)
    assert str(caught.value) == "network unreachable (ConnectError)"
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


@pytest.mark.parametrize(
    ("response", "kind"),
    [
        (httpx.Response(401, json={"message": "Bad credentials"}), "auth"),
        (httpx.Response(429, headers={"Retry-After": "3600"}), "rate_limited"),
        (httpx.Response(403, headers={"x-ratelimit-remaining": "0"}), "rate_limited"),
        (httpx.Response(403, json={"message": "Forbidden"}), "http"),
        (httpx.Response(404, text="not here"), "http"),
        (httpx.Response(503), "http"),
    ],
)
async def test_error_statuses_say_why(response: httpx.Response, kind: FailureKind) -> None:
    server = Server(response)
    http = make_client(server, [], retries=0)
    with pytest.raises(HttpStatusError) as caught:
        await http.get_json("/q")
    assert caught.value.kind == kind
    assert caught.value.status_code == response.status_code


def test_http_status_error_passes_its_kind_on() -> None:
    assert HttpStatusError("x", 500).kind == "http"
    error = HttpStatusError("x", 429, kind="rate_limited")
    assert error.kind == "rate_limited" and error.status_code == 429


async def test_malformed_json_is_a_bad_response_with_its_cause() -> None:
    server = Server(httpx.Response(200, text="<html>oops</html>"))
    http = make_client(server, [])
    with pytest.raises(SourceError, match="malformed JSON") as caught:
        await http.get_json("/q")
    assert caught.value.kind == "bad_response"
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)
