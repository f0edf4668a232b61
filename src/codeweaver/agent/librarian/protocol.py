"""The JSON a librarian decision is written in, tolerant of what small models emit.

The embedded model has no native tool calling, so each decision is one JSON object:
`{"thought": "...", "tool": "<tool name>|answer", "input": "..."}`. Common variants
(`action` / `action_input`, an input object, `final_answer`) are accepted.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import AliasChoices, BaseModel, Field, field_validator

ANSWER = "answer"
# Names small models use for "stop and answer".
_ANSWER_ALIASES = frozenset({"answer", "final_answer", "final answer", "finish", "done"})
_INPUT_KEYS = ("query", "input", "text", "reasoning", "thought")


class Decision(BaseModel):
    """One step of the loop: why, which tool, and the tool's input."""

    thought: str = ""
    tool: str = Field(validation_alias=AliasChoices("tool", "action", "tool_name"))
    input: str = Field(
        default="", validation_alias=AliasChoices("input", "action_input", "query", "args")
    )

    @field_validator("thought", mode="before")
    @classmethod
    def _thought_text(cls, value: Any) -> str:
        return "" if value is None else str(value).strip()

    @field_validator("tool", mode="before")
    @classmethod
    def _tool_name(cls, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("the tool must be a tool name")
        name = value.strip().lower()
        return ANSWER if name in _ANSWER_ALIASES else name

    @field_validator("input", mode="before")
    @classmethod
    def _input_text(cls, value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, dict):  # {"query": "..."}: the model's idea of arguments
            for key in _INPUT_KEYS:
                if isinstance(value.get(key), str):
                    return str(value[key]).strip()
            return json.dumps(value, ensure_ascii=False)
        return str(value).strip()

    @property
    def answers(self) -> bool:
        return self.tool == ANSWER
