"""Every step carries an id and is streamed exactly once, even when a node announces it
as it starts and returns it again in its update."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from codeweaver.agent.runner import Assistant
from tests.fakes import FakeSource, doc, make_deps

SCRIPT = {
    "generate_answer": "Iterate over the lines of a file with a for loop [1].",
    "check_answer": '{"unsupported": [], "answers_question": true}',
}


async def test_each_step_is_streamed_once_and_matches_the_turns_record(tmp_path: Path) -> None:
    sources = [FakeSource("stackoverflow", [doc(1)]), FakeSource("installed_docs", [doc(2)])]
    deps, _ = make_deps(tmp_path, SCRIPT, sources)
    events = [e async for e in Assistant(deps).stream("How do I read a file line by line?")]
    streamed = [e.step for e in events if e.kind == "step" and e.step is not None]
    result = events[-1].result
    assert result is not None

    ids = [s["id"] for s in streamed]
    assert all(ids) and Counter(ids).most_common(1)[0][1] == 1  # present, never repeated
    # Each search, and the writing, is announced as it starts and returned in its node's
    # update: once.
    acts = [s["node"] for s in streamed if s["kind"] == "act"]
    assert sorted(acts) == ["generate_answer", "search_official_docs", "search_stackoverflow"]
    # What was shown live is what the turn records: the same steps, by id.
    assert set(ids) == {s["id"] for s in result.steps}
