"""The contract every online source keeps through the shared HTTP client, each against
responses recorded in its API's documented shape (respx, no network): a server error is
retried, repeated ones open the breaker until its cooldown, a client error is not retried,
malformed JSON and timeouts are clear errors, an unreachable network skips at once, a
missing or rejected secret never calls again, and no message ever shows the secret.

The sources and their recorded answers are in `online.py`; what only one source does (rate
limits, quotas, result mapping) stays in its own test file."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
import respx

from codeweaver.sources.base import Source, SourceError
from codeweaver.sources.http import SourceUnavailable
from tests.fakes import FakeClock
from tests.unit.sources.online import (
    CHECKS_THE_SECRET,
    COOLDOWN,
    NEEDS_A_SECRET,
    SOURCES,
    Online,
    recorded_sleep,
)


@pytest.fixture
def make_source(sleeps: list[float], clock: FakeClock) -> Callable[..., Source]:
    """`make_source(online, secret=…)`: the source with the test's clock, its sleeps
    recorded instead of slept, and its secret unless told otherwise."""

    sleep = recorded_sleep(sleeps)

    def make(online: Online, secret: str | None = "default") -> Source:
        return online.build(sleep, clock, online.secret if secret == "default" else secret)

    return make


def ids(online: Online) -> str:
    return online.name


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_a_server_error_then_success_is_retried(
    api: respx.MockRouter, make_source: Callable[..., Source], sleeps: list[float], online: Online
) -> None:
    route = online.route(api)
    route.side_effect = [online.flaky(), online.ok()]

    assert len(await online.search(make_source(online))) == online.results
    assert route.call_count == 2 and len(sleeps) == 1


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_server_errors_every_time_open_the_breaker_until_its_cooldown(
    api: respx.MockRouter,
    make_source: Callable[..., Source],
    sleeps: list[float],
    clock: FakeClock,
    online: Online,
) -> None:
    route = online.route(api).mock(side_effect=lambda _: online.down())
    source = make_source(online)

    for _ in range(2):
        with pytest.raises(SourceError, match="HTTP 503"):
            await online.search(source)
    assert route.call_count == 6  # 1 + 2 retries, twice
    assert len(sleeps) == 4
    assert source.status().state == "skipped"
    with pytest.raises(SourceUnavailable, match="skipped after 2 failures"):
        await online.search(source)
    assert route.call_count == 6

    clock.now += COOLDOWN + 1
    route.mock(side_effect=lambda _: online.ok())
    assert len(await online.search(source)) == online.results
    assert source.status().state == "ready"


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_a_client_error_is_not_retried_and_keeps_the_source(
    api: respx.MockRouter, make_source: Callable[..., Source], sleeps: list[float], online: Online
) -> None:
    route = online.route(api).mock(return_value=online.client_error())
    source = make_source(online)

    with pytest.raises(SourceError, match=online.client_says) as caught:
        await online.search(source)

    assert not isinstance(caught.value, SourceUnavailable)
    assert route.call_count == 1 and sleeps == []
    assert source.status().state == "ready"  # one client error does not open the breaker


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_malformed_json_is_a_source_error(
    api: respx.MockRouter, make_source: Callable[..., Source], online: Online
) -> None:
    online.route(api).mock(return_value=online.malformed())

    with pytest.raises(SourceError, match="malformed JSON"):
        await online.search(make_source(online))


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_a_timeout_is_retried_then_reported(
    api: respx.MockRouter, make_source: Callable[..., Source], sleeps: list[float], online: Online
) -> None:
    route = online.route(api).mock(side_effect=httpx.ReadTimeout("slow"))

    with pytest.raises(SourceError, match=online.timeout_says):
        await online.search(make_source(online))
    assert route.call_count == 3 and len(sleeps) == 2


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_an_unreachable_network_is_unavailable_at_once_and_blocks_when_repeated(
    api: respx.MockRouter, make_source: Callable[..., Source], sleeps: list[float], online: Online
) -> None:
    route = online.route(api).mock(side_effect=httpx.ConnectError("no route"))
    source = make_source(online)

    with pytest.raises(SourceUnavailable, match=online.unreachable_says):
        await online.search(source)
    assert route.call_count == 1 and sleeps == []
    # One connect failure (a blip) does not block the source for the cooldown…
    assert source.status().state == "ready"
    with pytest.raises(SourceUnavailable, match=online.unreachable_says):
        await online.search(source)
    # …a second one in a row does.
    assert route.call_count == 2 and sleeps == []
    assert source.status().state == "skipped"
    assert "unreachable" in source.status().reason


@pytest.mark.parametrize("online", SOURCES, ids=ids)
async def test_a_secret_echoed_in_an_error_is_redacted(
    api: respx.MockRouter, make_source: Callable[..., Source], online: Online
) -> None:
    online.route(api).mock(side_effect=online.echo)
    source = make_source(online)

    with pytest.raises(SourceError, match=online.echo_says) as caught:
        await online.search(source)

    assert online.secret not in str(caught.value)
    assert online.redacted in str(caught.value)
    assert online.secret not in source.status().reason


@pytest.mark.parametrize("online", NEEDS_A_SECRET, ids=ids)
async def test_without_its_secret_a_source_is_skipped_and_never_calls(
    api: respx.MockRouter, make_source: Callable[..., Source], online: Online
) -> None:
    route = online.route(api).mock(side_effect=lambda _: online.ok())
    source = make_source(online, secret=None)

    assert source.status().state == "skipped"
    assert source.status().reason == online.missing
    with pytest.raises(SourceUnavailable, match=online.missing):
        await online.search(source)
    assert route.call_count == 0 and api.calls.call_count == 0


@pytest.mark.parametrize("online", CHECKS_THE_SECRET, ids=ids)
async def test_a_rejected_secret_fails_without_retry_and_skips_the_source(
    api: respx.MockRouter, make_source: Callable[..., Source], sleeps: list[float], online: Online
) -> None:
    assert online.rejected is not None
    route = online.route(api).mock(return_value=online.rejected())
    source = make_source(online)

    with pytest.raises(SourceError, match=online.rejected_says) as caught:
        await online.search(source)

    assert not isinstance(caught.value, SourceUnavailable)
    assert caught.value.kind == "auth"
    assert online.secret not in str(caught.value) and online.secret not in str(
        caught.value.__cause__
    )
    assert route.call_count == 1 and sleeps == []
    assert source.status().state == "skipped"
    assert online.rejected_reason in source.status().reason
    with pytest.raises(SourceUnavailable, match=online.rejected_reason):
        await online.search(source)
    assert route.call_count == 1
