"""The conversation so far, as the nodes read it: the last turn and the recent history."""

from __future__ import annotations

from langchain_core.messages import AnyMessage

from codeweaver.llm.structured import message_text

HISTORY_TURNS = 6
HISTORY_CHARS = 1500


def previous_answer(messages: list[AnyMessage]) -> str | None:
    """The last assistant message before the current question, if any."""
    for message in reversed(messages[:-1] if messages else []):
        if message.type == "ai":
            return message_text(message)
    return None


def previous_question(messages: list[AnyMessage]) -> str | None:
    """The last user message before the current question, if any."""
    for message in reversed(messages[:-1] if messages else []):
        if message.type == "human":
            return message_text(message)
    return None


def earlier_question(messages: list[AnyMessage]) -> str | None:
    """The question the last answer answered: a follow-up is read against it."""
    return previous_question(messages) if previous_answer(messages) is not None else None


def history_turns(messages: list[AnyMessage]) -> list[tuple[str, str]]:
    """The recent turns before the current question as (role, text), each text shortened."""
    turns: list[tuple[str, str]] = []
    for message in messages[:-1][-HISTORY_TURNS:]:
        role = "assistant" if message.type == "ai" else "user"
        turns.append((role, message_text(message)[:HISTORY_CHARS]))
    return turns
