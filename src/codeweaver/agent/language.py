"""Which language a question is in, and which one the answer should use."""

from __future__ import annotations

import unicodedata


def detect_language(text: str) -> str:
    """`ko` when Hangul dominates the letters, `ja`/`zh` likewise, otherwise `en`."""
    counts = {"ko": 0, "ja": 0, "zh": 0, "latin": 0}
    for char in text:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        if name.startswith("HANGUL"):
            counts["ko"] += 1
        elif name.startswith(("HIRAGANA", "KATAKANA")):
            counts["ja"] += 1
        elif name.startswith("CJK UNIFIED"):
            counts["zh"] += 1
        else:
            counts["latin"] += 1
    if counts["ko"]:
        # Korean questions are full of English identifiers; a few syllables decide.
        return "ko" if counts["ko"] * 4 >= counts["latin"] or counts["ko"] >= 4 else "en"
    if counts["ja"]:
        return "ja"
    if counts["zh"] > counts["latin"]:
        return "zh"
    return "en"


def answer_language(question: str, override: str | None) -> str:
    return override or detect_language(question)


def is_english(text: str) -> bool:
    return detect_language(text) == "en"
