"""Keeping a reply in its language's writing system.

The embedded Qwen model drifts into Chinese in the middle of Korean answers (3 of 20
Korean rephrasings of StackEval questions held Chinese sentences: "你可以使用 `Blob` API",
"解决 방법 확인"). Modern technical Korean never writes Han ideographs, so a model that
supports it is told not to decode them: the drift cannot start.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

Script = Literal["han"]

# UTF-8 lead bytes of U+4000–U+9FFF (CJK Unified Ideographs and the end of Extension A):
# a token holding one of them is (part of) a Han character, and no other script uses them.
# Hangul (U+AC00–U+D7A3) starts with 0xEA–0xED.
_HAN_LEADS = frozenset(range(0xE4, 0xEA))

#: Scripts an answer in this language never needs, unless the question itself uses them.
UNUSED_SCRIPTS: dict[str, frozenset[Script]] = {"ko": frozenset({"han"})}


def writes_script(token: bytes, script: Script) -> bool:
    """Whether a token's bytes belong to `script` (byte-level tokens may hold part of a
    character: a lead byte is enough)."""
    return any(byte in _HAN_LEADS for byte in token)


def has_script(text: str, script: Script) -> bool:
    return any("\u4000" <= char <= "\u9fff" for char in text)


def scripts_to_avoid(language: str, question: str) -> frozenset[Script]:
    """The scripts the answer to `question` in `language` must not be written in."""
    return frozenset(s for s in UNUSED_SCRIPTS.get(language, ()) if not has_script(question, s))


@runtime_checkable
class ScriptSteered(Protocol):
    """A model that can be kept from decoding the characters of some scripts."""

    def script_kwargs(self, avoid: frozenset[Script]) -> dict[str, Any]:
        """Extra call arguments that keep the reply out of `avoid`."""


def in_language_kwargs(llm: object, language: str, question: str) -> dict[str, Any]:
    """Call arguments that keep `llm`'s answer to `question` in `language`'s scripts, for
    the models that support it (none for the others)."""
    avoid = scripts_to_avoid(language, question)
    return llm.script_kwargs(avoid) if avoid and isinstance(llm, ScriptSteered) else {}
