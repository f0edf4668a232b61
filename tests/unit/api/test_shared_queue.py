"""The shared run queue without Redis: it says so at start, naming CODEWEAVER_REDIS_URL
(the queue over a real Redis: `tests/integration/api/test_shared_queue_redis.py`)."""

from __future__ import annotations

import pytest

from codeweaver.api.shared_queue import QueueStoreError, SharedRunQueue


async def test_an_unreachable_redis_is_a_clear_error_at_start() -> None:
    queue = SharedRunQueue("redis://127.0.0.1:1/0", 1, 1)  # nothing listens on port 1
    with pytest.raises(QueueStoreError, match="CODEWEAVER_REDIS_URL"):
        await queue.check_store()
    await queue.aclose()
