"""One real StackEval post, served by the loopback Stack Exchange API, answered by the real
embedded model: asked by its title, the question is the post's own, so the model writes a
short lead-in from the whole accepted answer and the reader gets that answer as written.

The post (`tests/fixtures/stackeval/whole_answer.jsonl`, Stack Overflow, CC BY-SA) asks for
the key whose list value holds a substring; its accepted answer gives `matchingKeys`, a
comprehension over `dictionary.items()` with `any(...)`, in its third code block.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from codeweaver.agent.runner import Assistant, RunResult
from codeweaver.config import Settings
from codeweaver.factory import build_deps, open_assistant, prepare_sources
from codeweaver_eval.stackexchange.corpus import Corpus
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

POST = Path(__file__).parents[1] / "fixtures" / "stackeval" / "whole_answer.jsonl"
TITLE = "How to search if dictionary value contains certain string with Python"
CITATION = re.compile(r"\[(\d+)\]")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def answered(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunResult]:
    with serve_loopback(StackExchangeLoopback(Corpus.load(POST))) as base_url:
        settings = Settings(
            data_dir=tmp_path_factory.mktemp("data"),
            enabled_sources="stackoverflow",
            stackexchange_url=base_url,
            http_cache=False,
            cache_enabled=False,
        )
        deps = build_deps(settings)
        assert prepare_sources(deps) == []
        assistant: Assistant
        async with open_assistant(deps) as assistant:
            yield await assistant.ask(TITLE, "whole-source-1")


async def test_the_accepted_answer_is_cited(answered: RunResult) -> None:
    origin = [
        n
        for n, s in enumerate(answered.sources, 1)
        if s["source"] == "stackoverflow" and s["title"] == TITLE
    ]
    assert origin, answered.sources
    cited = {int(n) for n in CITATION.findall(answered.answer)}
    assert set(origin) & cited, answered.answer


async def test_the_answer_keeps_the_accepted_answer_s_way(answered: RunResult) -> None:
    lead, _, quote = answered.answer.partition("The answer [1], as its author wrote it:")
    assert quote, answered.answer
    # The key is found by testing every string of each value list, as `matchingKeys` does:
    # `any(... in s for s in val)` over `.items()`, the author's code byte for byte.
    assert (
        "return [key for key,val in dictionary.items() if any(searchString in s for s in val)]"
        in quote
    )
    assert "```" not in lead and 0 < len(lead) < 1200, lead
    assert "**Warning:**" not in answered.answer
