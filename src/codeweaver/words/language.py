"""Which language a question is in, and which one the answer should use."""

from __future__ import annotations

import re
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


# Markdown code, and the HTML code the small model sometimes writes instead.
_CODE = re.compile(
    r"```.*?(?:```|$)|`[^`\n]*`|<(pre|code)>.*?(?:</\1>|$)", re.DOTALL | re.IGNORECASE
)
# A word, a dotted or hyphenated name ("Node.js", "scikit-learn") counting as one.
_WORD = re.compile(r"[^\W\d_](?:[\w.#+-]*[^\W_])?")
_URL = re.compile(r"https?://\S+")
_PIECES = re.compile(r"(?<=[.!?。])\s+|\n+")
# An answer counts as written in a language when this share of its prose is.
IN_LANGUAGE = 0.8


def language_share(text: str, language: str) -> float | None:
    """Share of the prose sentences (code, inline code and links set aside) written in
    `language`; a Korean sentence is one holding Hangul, whatever identifiers it names.
    A one-word piece (a label such as "**Node.js**:") is not a sentence. None when the
    text has no prose."""
    prose = _URL.sub(" ", _CODE.sub(" ", text))
    pieces = [p for p in _PIECES.split(prose) if len(_WORD.findall(p)) >= 2]
    if not pieces:
        return None
    if language == "ko":
        hits = sum(1 for p in pieces if any("\uac00" <= c <= "\ud7a3" for c in p))
    else:
        hits = sum(1 for p in pieces if detect_language(p) == language)
    return hits / len(pieces)
