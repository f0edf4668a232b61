"""A real StackEval question and its accepted answer (Stack Overflow, CC BY-SA), as the
Stack Overflow source returns it: `tests/fixtures/stackeval/whole_answer.jsonl`. The asker
wants the key whose list value holds a substring; the function that returns it
(`matchingKeys`) is the answer's third code block."""

from __future__ import annotations

import json
from pathlib import Path

from codeweaver.agent.state import SearchResult

POST = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "stackeval" / "whole_answer.jsonl").read_text()
)
TITLE, _, BODY = POST["question"].partition("\n")
ANSWER = POST["answer"].strip()


def accepted_answer() -> SearchResult:
    return SearchResult(
        title=TITLE,
        url="https://stackoverflow.com/q/32012345",
        snippet=f"[accepted · python · 4 votes · question 12 votes]\n{ANSWER}",
        asked=BODY.strip(),
        source="stackoverflow",
        score=0.9,
        attribution="answer by a Stack Overflow user, CC BY-SA 4.0",
    )
