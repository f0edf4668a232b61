"""PostgreSQL and Redis for the tests marked `services` (integration and e2e tiers only).

The servers are the README's: PostgreSQL on 127.0.0.1:5432 (database `test`, trust auth)
and Redis on 127.0.0.1:6379, or wherever CODEWEAVER_TEST_DATABASE_URL and
CODEWEAVER_TEST_REDIS_URL point. A test that needs one and cannot reach it fails, naming
it: deselect them with `-m "not services"`.
"""

from __future__ import annotations

import os

import pytest

POSTGRES_URL = os.environ.get(
    "CODEWEAVER_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("CODEWEAVER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def postgres_url() -> str:
    """POSTGRES_URL once it answers; the test fails (not skips) when it does not."""
    import psycopg

    try:
        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL at {POSTGRES_URL} is not reachable ({exc}); see README")
    return POSTGRES_URL


def redis_url() -> str:
    """REDIS_URL once it answers; the test fails (not skips) when it does not."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is not reachable ({exc}); see README")
    return REDIS_URL
