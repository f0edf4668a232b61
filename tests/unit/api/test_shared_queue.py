"""The run queue shared by replicas through a real Redis: one line, one set of slots."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from codeweaver.api.queue import QueueFullError
from codeweaver.api.shared_queue import PlaceLostError, QueueStoreError, SharedRunQueue

REDIS_URL = os.environ.get("CODEWEAVER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

Replicas = Callable[..., SharedRunQueue]


@pytest.fixture
async def replicas() -> AsyncIterator[Replicas]:
    """Queues on one Redis line (a fresh one per test), as separate replicas hold them."""
    name = f"test-{uuid.uuid4().hex}"
    made: list[SharedRunQueue] = []

    def make(concurrency: int = 1, max_waiting: int = 2, **options: float) -> SharedRunQueue:
        queue = SharedRunQueue(REDIS_URL, concurrency, max_waiting, name=name, **options)
        made.append(queue)
        return queue

    yield make
    for queue in made:
        await queue.aclose()


async def settle(*slots: asyncio.Future[None], rounds: int = 10) -> None:
    """Let waiting tickets poll Redis a few times."""
    for _ in range(rounds):
        await asyncio.sleep(0.02)
    del slots


async def test_admission_counts_every_replicas_places(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=2), replicas(concurrency=1, max_waiting=2)
    first = await a.admit()
    held = [await b.admit(), await a.admit()]  # a dropped ticket gives its place back
    with pytest.raises(QueueFullError) as full:
        await b.admit()
    assert full.value.retry_after >= 1
    first.cancel()
    await asyncio.sleep(0.05)  # the place is given back in the background
    assert (await b.admit()).number > first.number
    assert not any(ticket.done for ticket in held)


async def test_slots_go_in_reservation_order_across_replicas(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=3), replicas(concurrency=1, max_waiting=3)
    t1, t2, t3 = await a.admit(), await b.admit(), await a.admit()
    await t1.acquire()
    s3 = asyncio.ensure_future(t3.acquire())
    s2 = asyncio.ensure_future(t2.acquire())
    await settle(s2, s3)
    assert not s2.done() and not s3.done()
    assert (t2.position, t3.position) == (0, 1)
    t1.release()
    await asyncio.wait_for(s2, 2)
    await settle(s3)
    assert not s3.done() and t3.position == 0
    t2.release()
    await asyncio.wait_for(s3, 2)
    t3.release()


async def test_a_burst_on_two_replicas_never_computes_more_than_the_slots(
    replicas: Replicas,
) -> None:
    a, b = replicas(concurrency=2, max_waiting=10), replicas(concurrency=2, max_waiting=10)
    running = 0
    most = 0

    async def answer(queue: SharedRunQueue) -> None:
        nonlocal running, most
        ticket = await queue.admit()
        await ticket.acquire()
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.05)
        running -= 1
        ticket.release()

    await asyncio.wait_for(asyncio.gather(*(answer(q) for q in [a, b] * 5)), 10)
    assert most == 2


async def test_a_dead_replicas_slot_expires_and_goes_to_the_next(replicas: Replicas) -> None:
    dying = replicas(concurrency=1, max_waiting=1, lease_seconds=0.5, renew_seconds=0.1)
    alive = replicas(concurrency=1, max_waiting=1)
    held = await dying.admit()
    await held.acquire()
    waiting = await alive.admit()
    slot = asyncio.ensure_future(waiting.acquire())
    await settle(slot)
    assert not slot.done()
    assert dying._renewer is not None
    dying._renewer.cancel()  # the replica stops renewing, as a killed process does
    await asyncio.wait_for(slot, 3)
    waiting.release()


async def test_a_place_that_expired_before_its_turn_is_an_error(replicas: Replicas) -> None:
    slow = replicas(concurrency=1, max_waiting=1, lease_seconds=0.3, renew_seconds=60)
    ticket = await slow.admit()
    await asyncio.sleep(0.5)
    with pytest.raises(PlaceLostError, match="expired"):
        await ticket.acquire()
    assert ticket.done


async def test_cancelling_a_waiting_ticket_gives_its_place_back(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=1), replicas(concurrency=1, max_waiting=1)
    running = await a.admit()
    await running.acquire()
    waiting = await b.admit()
    slot = asyncio.ensure_future(waiting.acquire())
    await settle(slot)
    slot.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slot
    assert waiting.done
    await asyncio.sleep(0.05)
    again = await a.admit()  # the line has room again
    running.release()
    await asyncio.wait_for(again.acquire(), 2)
    again.release()


async def test_the_snapshot_counts_the_whole_cluster(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=3), replicas(concurrency=1, max_waiting=3)
    first = await a.admit()
    await first.acquire()
    waiting = [await b.admit(), await b.admit()]
    await a.check_store()
    assert a.snapshot() == {
        "running": 1,
        "waiting": 2,
        "concurrency": 1,
        "max_waiting": 3,
        "shared": True,
    }
    del waiting


async def test_an_unreachable_redis_is_a_clear_error_at_start() -> None:
    queue = SharedRunQueue("redis://127.0.0.1:1/0", 1, 1)  # nothing listens on port 1
    with pytest.raises(QueueStoreError, match="CODEWEAVER_REDIS_URL"):
        await queue.check_store()
    await queue.aclose()
