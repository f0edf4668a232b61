"""Admission to the run queue: capacity is slots plus line, in order, and never leaks."""

from __future__ import annotations

import asyncio
import gc

import pytest

from codeweaver.api.queue import QueueFullError, RunQueue, Ticket
from tests.fakes import FakeClock


async def settle() -> None:
    """Let every ready task run until nothing changes."""
    for _ in range(5):
        await asyncio.sleep(0)


def start(ticket: Ticket) -> asyncio.Task[None]:
    """Ask for a slot the way the chat service does: in a task of its own."""
    return asyncio.ensure_future(ticket.acquire())


async def test_a_burst_on_an_idle_server_fills_every_slot_and_the_line() -> None:
    queue = RunQueue(8, 8)
    tickets = [queue.reserve() for _ in range(16)]  # simultaneous: nobody has started yet
    assert queue.snapshot() == {"running": 0, "waiting": 8, "concurrency": 8, "max_waiting": 8}
    with pytest.raises(QueueFullError) as refused:
        queue.reserve()
    assert 1 <= refused.value.retry_after <= queue.seconds_per_run
    slots = [start(t) for t in tickets]
    await settle()
    assert [s.done() for s in slots] == [True] * 8 + [False] * 8
    assert queue.snapshot()["running"] == 8 and queue.snapshot()["waiting"] == 8
    assert [t.position for t in tickets[8:]] == list(range(8))
    with pytest.raises(QueueFullError):
        queue.reserve()
    for ticket in tickets[:8]:
        ticket.release()
    await settle()
    assert all(s.done() for s in slots) and queue.snapshot()["waiting"] == 0
    for ticket in tickets[8:]:
        ticket.release()
    assert queue.snapshot()["running"] == 0


def test_the_local_default_admits_one_running_and_eight_waiting() -> None:
    queue = RunQueue(1, 8)
    tickets = [queue.reserve() for _ in range(9)]
    with pytest.raises(QueueFullError):
        queue.reserve()
    assert [t.position for t in tickets] == [0, 0, *range(1, 8)]


def test_reserved_tickets_that_have_a_free_slot_are_not_waiting() -> None:
    queue = RunQueue(8, 8)
    for _ in range(3):
        queue.reserve()
    assert queue.snapshot()["waiting"] == 0


async def test_cancel_frees_capacity_whether_waiting_or_not_yet_started() -> None:
    queue = RunQueue(1, 1)
    running, waiting = queue.reserve(), queue.reserve()
    await running.acquire()
    slot = start(waiting)
    await settle()
    with pytest.raises(QueueFullError):
        queue.reserve()
    # The chat service's path when the client leaves while waiting.
    slot.cancel()
    waiting.cancel()
    await settle()
    assert slot.cancelled()
    assert queue.snapshot()["waiting"] == 0
    unstarted = queue.reserve()  # the freed place, taken by a ticket that never starts
    unstarted.cancel()
    unstarted.cancel()  # a second cancel changes nothing
    later = queue.reserve()
    running.release()
    await later.acquire()
    assert queue.snapshot() == {"running": 1, "waiting": 0, "concurrency": 1, "max_waiting": 1}
    later.release()
    assert queue.running == 0


async def test_release_frees_the_slot_for_the_next_in_line() -> None:
    queue = RunQueue(1, 1)
    first, second = queue.reserve(), queue.reserve()
    await first.acquire()
    slot = start(second)
    await settle()
    assert not slot.done() and second.position == 0
    first.release()
    first.release()  # twice: the slot is not given back twice
    await settle()
    assert slot.done() and queue.running == 1
    third = queue.reserve()  # the released slot became a place in line
    with pytest.raises(QueueFullError):
        queue.reserve()
    second.release()
    third.cancel()
    assert queue.running == 0


async def test_slots_go_in_reservation_order() -> None:
    queue = RunQueue(1, 8)
    first = queue.reserve()
    await first.acquire()
    tickets = [queue.reserve() for _ in range(6)]
    order: list[int] = []

    async def run(ticket: Ticket) -> None:
        await ticket.acquire()
        order.append(ticket.number)
        await asyncio.sleep(0)
        ticket.release()

    # The requests ask for their slot in the opposite order they were admitted in.
    tasks = [asyncio.ensure_future(run(t)) for t in reversed(tickets)]
    await settle()
    assert [t.position for t in tickets] == list(range(6))
    first.release()
    await asyncio.gather(*tasks)
    assert order == [t.number for t in tickets]
    assert queue.snapshot()["running"] == 0 and queue.snapshot()["waiting"] == 0


async def test_a_slot_handed_over_as_the_wait_is_cancelled_is_passed_on() -> None:
    queue = RunQueue(1, 2)
    first, second, third = queue.reserve(), queue.reserve(), queue.reserve()
    await first.acquire()
    slot2, slot3 = start(second), start(third)
    await settle()
    first.release()  # hands the slot to `second`, whose task has not resumed yet
    slot2.cancel()
    await settle()
    assert slot2.cancelled() and slot3.done() and not slot3.cancelled()
    assert queue.running == 1 and second.state == "done"
    third.release()
    assert queue.running == 0


async def test_a_ticket_cancelled_while_its_slot_is_handed_over_does_not_run() -> None:
    queue = RunQueue(1, 1)
    first, second = queue.reserve(), queue.reserve()
    await first.acquire()
    slot = start(second)
    await settle()
    first.release()
    second.cancel()  # before its task resumed with the slot
    await settle()
    assert slot.cancelled() and queue.running == 0


async def test_a_dropped_ticket_gives_its_place_back() -> None:
    """A response abandoned before its body started never cancels its ticket."""
    queue = RunQueue(1, 0)
    queue.reserve()  # dropped at once
    gc.collect()
    ticket = queue.reserve()
    await ticket.acquire()
    del ticket
    gc.collect()
    assert queue.running == 0
    queue.reserve()


def test_retry_after_is_when_the_oldest_run_should_end() -> None:
    clock = FakeClock(100.0)
    queue = RunQueue(2, 0, seconds_per_run=20.0, clock=clock)
    first, second = queue.reserve(), queue.reserve()
    queue._grant(first.number)  # started at 100
    clock.now = 105.0
    queue._grant(second.number)
    with pytest.raises(QueueFullError) as refused:
        queue.reserve()
    assert refused.value.retry_after == 15
    clock.now = 190.0  # past its estimate: the average gap between two ends
    with pytest.raises(QueueFullError) as refused:
        queue.reserve()
    assert refused.value.retry_after == 10
