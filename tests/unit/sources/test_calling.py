"""`search_safely`: every door's one way to call a source, and the words of its failures."""

from __future__ import annotations

import asyncio
import logging

import pytest

from codeweaver.sources.base import SourceError
from codeweaver.sources.calling import Failed, Found, search_safely
from tests.fakes import FakeSource, docs


async def test_an_answer_is_found_with_its_results_and_time() -> None:
    source = FakeSource("github", results=docs(3))
    outcome = await search_safely(source, "json.loads", "learning", 2, timeout=1)
    assert isinstance(outcome, Found)
    assert outcome.source == "github" and outcome.results == docs(3)[:2]
    assert 0 <= outcome.seconds < 1
    assert source.queries == ["json.loads"]


async def test_no_answer_in_time_is_a_timeout() -> None:
    outcome = await search_safely(FakeSource("web", delay=5), "q", "learning", 5, timeout=0.05)
    assert isinstance(outcome, Failed) and outcome.kind == "timeout"
    assert outcome.reason == "timed out after 0.05s"
    assert outcome.text == "web timed out after 0.05s"
    assert outcome.diagnosis == "timeout: timed out after 0.05s"
    assert outcome.seconds < 1


async def test_a_source_error_is_told_in_its_own_words_with_its_kind() -> None:
    error = SourceError("rate limited;\n resets in 60s", kind="rate_limited")
    outcome = await search_safely(FakeSource("github", error=error), "q", "debugging", 5, timeout=1)
    assert isinstance(outcome, Failed) and outcome.error is error
    assert outcome.kind == "rate_limited"
    assert outcome.reason == "rate limited; resets in 60s"  # one line
    assert outcome.text == "github failed: rate limited; resets in 60s"
    assert outcome.diagnosis == "rate-limited: rate limited; resets in 60s"


async def test_a_bug_in_a_source_is_named_and_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = FakeSource("jira", error=KeyError("items"))
    with caplog.at_level(logging.ERROR, logger="codeweaver.sources.calling"):
        outcome = await search_safely(source, "q", "learning", 5, timeout=1)
    assert isinstance(outcome, Failed) and outcome.kind is None
    assert outcome.text == "jira failed: KeyError: 'items'"
    assert outcome.diagnosis == "error: KeyError: 'items'"
    assert any(record.exc_info for record in caplog.records)  # the traceback is in the log


async def test_cancelling_the_caller_is_not_a_failure() -> None:
    call = asyncio.ensure_future(
        search_safely(FakeSource("web", delay=5), "q", "learning", 5, timeout=10)
    )
    await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
