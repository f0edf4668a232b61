"""Every text CodeWeaver shows users exists in English and Korean, with the same fields."""

from __future__ import annotations

import string

from codeweaver.agent.user_text import LANGUAGES, TEXTS, say


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_text_is_in_every_language_with_the_same_fields() -> None:
    for key, texts in TEXTS.items():
        assert set(texts) == set(LANGUAGES), key
        assert _fields(texts["en"]) == _fields(texts["ko"]), key
        assert all(t.strip() for t in texts.values()), key


def test_say_fills_fields_and_falls_back_to_english() -> None:
    assert say("not_written", "ko", reason="timeout") == "답변을 생성하지 못했습니다 (timeout)."
    assert say("not_written", "ja", reason="timeout") == "I could not write an answer (timeout)."
    assert "{listing}" not in say("too_many", "en", count=3, listing="- a")
