"""The tools' arguments: their schemas, with the limits the service enforces, and what a
caller is told when an argument breaks one.

The SDK checks arguments against these schemas before a tool runs and would answer with
pydantic's own report (which quotes the rejected value); `argument_problem` says the same
in a line, with the service's own wording for a question it would refuse.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationError

from codeweaver.agent.rules.input_check import (
    MAX_QUESTION_CHARS,
    InvalidQuestionError,
    validate_question,
)
from codeweaver.memory.sessions import SESSION_ID

MAX_QUERY_CHARS = 500
MAX_LIMIT = 10

Question = Annotated[
    str,
    Field(
        description="The question, as a developer would ask it; include the error message "
        "or code it is about.",
        max_length=MAX_QUESTION_CHARS,
    ),
]
SessionArg = Annotated[
    str | None,
    Field(
        description="A session id from an earlier `ask` answer, to continue that "
        "conversation; omit to start a new one.",
        pattern=SESSION_ID.pattern,
    ),
]
ModeArg = Annotated[
    Literal["pipeline", "librarian"],
    Field(
        description="`pipeline` (default): plan, search all sources at once, check the "
        "answer. `librarian`: a tool-using loop of at most 10 steps, for questions that "
        "need several lookups.",
    ),
]
Query = Annotated[
    str,
    Field(
        description="What to search for: keywords, an API name or an error message.",
        max_length=MAX_QUERY_CHARS,
    ),
]
Limit = Annotated[int, Field(description="How many results per source.", ge=1, le=MAX_LIMIT)]
MinScore = Annotated[
    float | None,
    Field(
        description="Only results scoring at least this (0-1); omit it (default) for each "
        "source's ranked list whatever the scores, and judge relevance yourself. 0.13 is the "
        "bar the answer pipeline keeps for the installed docs.",
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
    ),
]


def argument_problem(error: ValidationError) -> str:
    """What is wrong with a call's arguments, one clause per argument, never quoting a
    rejected value (it is the caller's data, possibly long)."""
    problems: list[str] = []
    for item in error.errors(include_url=False, include_context=False):
        name = ".".join(str(part) for part in item["loc"]) or "arguments"
        value = item.get("input")
        if name == "question" and isinstance(value, str):
            try:
                validate_question(value)
            except InvalidQuestionError as exc:  # the words `ask` itself would use
                problems.append(f"invalid question: {exc}")
                continue
        problems.append(f"invalid {name}: {item['msg']}")
    return "; ".join(problems) or "invalid arguments"
