"""The run queue shared by replicas through a real Redis: one line, one set of slots."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from codeweaver.api.queue import QueueFullError
from codeweaver.api.shared_queue import PlaceLostError, SharedRunQueue, SharedTicket
from tests.services import redis_url

pytestmark = pytest.mark.services
SETTLE_SECONDS = 5.0


class Replicas:
    """Queues on one Redis line (a fresh one per test), as separate replicas hold them;
    counts each ticket's tries for a slot, so a test can wait for them instead of a time."""

    def __init__(self) -> None:
        self.url = redis_url()
        self.name = f"test-{uuid.uuid4().hex}"
        self.made: list[SharedRunQueue] = []
        self.polls: Counter[str] = Counter()

    def __call__(
        self, concurrency: int = 1, max_waiting: int = 2, **options: float
    ) -> SharedRunQueue:
        queue = SharedRunQueue(self.url, concurrency, max_waiting, name=self.name, **options)
        try_start = queue._try_start

        async def counted(token: str) -> int:
            answer = await try_start(token)
            self.polls[token] += 1
            return answer

        queue._try_start = counted  # type: ignore[method-assign]
        self.made.append(queue)
        return queue

    async def settle(self, *tickets: SharedTicket, rounds: int = 3) -> None:
        """Until each waiting ticket has asked Redis for its slot `rounds` more times."""
        wanted = {t.token: self.polls[t.token] + rounds for t in tickets}
        deadline = time.monotonic() + SETTLE_SECONDS
        while any(self.polls[token] < count for token, count in wanted.items()):
            assert time.monotonic() < deadline, "a waiting ticket stopped asking for its slot"
            await asyncio.sleep(0.01)


async def given_back(queue: SharedRunQueue) -> None:
    """Until the places `queue` gives back in the background are out of Redis."""
    await asyncio.gather(*list(queue._pending))


async def until_expired(queue: SharedRunQueue, ticket: SharedTicket) -> None:
    """Until Redis's own clock is past the lease of `ticket`'s place."""
    lease = queue._keys[2]
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        expiry = await queue._redis.zscore(lease, ticket.token)
        seconds, micros = await queue._redis.time()
        if expiry is None or seconds + micros / 1_000_000 > expiry:
            return
        assert time.monotonic() < deadline, "the place never expired"
        await asyncio.sleep(0.02)


@pytest.fixture
async def replicas() -> AsyncIterator[Replicas]:
    made = Replicas()
    yield made
    for queue in made.made:
        await queue.aclose()


async def test_admission_counts_every_replicas_places(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=2), replicas(concurrency=1, max_waiting=2)
    first = await a.admit()
    held = [await b.admit(), await a.admit()]  # a dropped ticket gives its place back
    with pytest.raises(QueueFullError) as full:
        await b.admit()
    assert full.value.retry_after >= 1
    first.cancel()
    await given_back(a)  # in the background
    assert (await b.admit()).number > first.number
    assert not any(ticket.done for ticket in held)


async def test_slots_go_in_reservation_order_across_replicas(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=3), replicas(concurrency=1, max_waiting=3)
    t1, t2, t3 = await a.admit(), await b.admit(), await a.admit()
    await t1.acquire()
    s3 = asyncio.ensure_future(t3.acquire())
    s2 = asyncio.ensure_future(t2.acquire())
    await replicas.settle(t2, t3)
    assert not s2.done() and not s3.done()
    assert (t2.position, t3.position) == (0, 1)
    t1.release()
    await asyncio.wait_for(s2, 2)
    await replicas.settle(t3)
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
    await replicas.settle(waiting)
    assert not slot.done()
    assert dying._renewer is not None
    dying._renewer.cancel()  # the replica stops renewing, as a killed process does
    await asyncio.wait_for(slot, 3)
    waiting.release()


async def test_a_place_that_expired_before_its_turn_is_an_error(replicas: Replicas) -> None:
    slow = replicas(concurrency=1, max_waiting=1, lease_seconds=0.3, renew_seconds=60)
    ticket = await slow.admit()
    await until_expired(slow, ticket)
    with pytest.raises(PlaceLostError, match="expired"):
        await ticket.acquire()
    assert ticket.done


async def test_cancelling_a_waiting_ticket_gives_its_place_back(replicas: Replicas) -> None:
    a, b = replicas(concurrency=1, max_waiting=1), replicas(concurrency=1, max_waiting=1)
    running = await a.admit()
    await running.acquire()
    waiting = await b.admit()
    slot = asyncio.ensure_future(waiting.acquire())
    await replicas.settle(waiting)
    slot.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slot
    assert waiting.done
    await given_back(b)
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
