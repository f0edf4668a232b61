"""Who a client is, and the budget each client gets."""

from __future__ import annotations

import pytest
from fastapi import HTTPException
from starlette.requests import Request

from codeweaver.api.rate_limit import (
    ProxySettingError,
    RequestLimiter,
    client_address,
    parse_networks,
    rate_key,
)


def request(peer: str, forwarded: str | None = None) -> Request:
    headers = [] if forwarded is None else [(b"x-forwarded-for", forwarded.encode())]
    scope = {"type": "http", "headers": headers, "client": (peer, 5000), "method": "POST"}
    return Request(scope)


def test_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy() -> None:
    assert client_address(request("127.0.0.1", "10.0.0.1"), []) == "127.0.0.1"
    proxies = parse_networks(["127.0.0.1", "10.1.0.0/16"])
    assert client_address(request("192.0.2.7", "10.0.0.1"), proxies) == "192.0.2.7"
    assert client_address(request("127.0.0.1", "10.0.0.1"), proxies) == "10.0.0.1"


def test_the_nearest_untrusted_hop_counts_so_a_forged_first_hop_does_not() -> None:
    proxies = parse_networks(["127.0.0.1", "10.1.0.0/16"])
    forged = request("127.0.0.1", "203.0.113.9, 198.51.100.4, 10.1.2.3")
    assert client_address(forged, proxies) == "198.51.100.4"
    assert client_address(request("127.0.0.1", "not-an-ip, 10.1.2.3"), proxies) == "127.0.0.1"
    assert client_address(request("127.0.0.1", ""), proxies) == "127.0.0.1"


def test_an_ipv6_client_is_its_64_bit_prefix() -> None:
    one = client_address(request("2001:db8:1:2::1"), [])
    other = client_address(request("2001:db8:1:2:ffff::9"), [])
    assert one == other == "2001:db8:1:2::/64"
    assert client_address(request("2001:db8:1:3::1"), []) != one


def test_a_bad_proxy_setting_names_the_entry() -> None:
    with pytest.raises(ProxySettingError, match=r"'proxy\.local'"):
        parse_networks(["10.0.0.1", "proxy.local"])


def test_users_and_addresses_are_separate_keys() -> None:
    assert rate_key("alice", "127.0.0.1") == "user:alice"
    assert rate_key(None, "127.0.0.1") == "addr:127.0.0.1"


async def test_the_budget_refuses_with_retry_after_then_other_keys_still_pass() -> None:
    limiter = RequestLimiter(3)
    for _ in range(3):
        await limiter.check("addr:a")
    with pytest.raises(HTTPException) as raised:
        await limiter.check("addr:a")
    assert raised.value.status_code == 429
    assert raised.value.headers is not None
    assert 1 <= int(raised.value.headers["Retry-After"]) <= 60
    await limiter.check("addr:b")


async def test_an_unreachable_redis_is_a_clear_error_at_start_and_503_per_request() -> None:
    from codeweaver.api.rate_limit import RateStoreError

    limiter = RequestLimiter(3, "redis://127.0.0.1:1/0")  # nothing listens on port 1
    with pytest.raises(RateStoreError, match="CODEWEAVER_REDIS_URL"):
        await limiter.check_store()
    with pytest.raises(HTTPException) as raised:
        await limiter.check("addr:a")
    assert raised.value.status_code == 503
