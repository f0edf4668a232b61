"""D6 + D7: `validate_question` accepts text in any script and rejects binary and
invalid Unicode, each with a reason."""

from __future__ import annotations

import random

import pytest

from codeweaver.agent.rules.input_check import InvalidQuestionError, validate_question

FAMILY = "👨\u200d👩\u200d👧\u200d👦"

TEXT = {
    "family emoji (ZWJ)": f"What is the best way to render {FAMILY} {FAMILY} {FAMILY} in Python?",
    "12 NBSP indent": "Why is this a syntax error?\n" + "\u00a0" * 12 + "return x\n",
    "10 ZWSP": "How do I remove\u200b zero-width\u200b spaces?" + "\u200b" * 8,
    "Korean, 9 U+3000": "파이썬에서\u3000" * 9 + "리스트를 어떻게 정렬하나요?",
    "Arabic, 9 RLM": "كيف أرتب قائمة في بايثون؟ " + "\u200f" * 9,
    "9 LRM": "Why does my label render backwards?" + "\u200e" * 9,
    "9 form feeds": "Why does my C file have ^L?\n" + "int f(void);\n\f" * 9,
    "BOMs": "\ufeffHow do I strip a BOM from a CSV?" + "\ufeff" * 9,
    "vertical tabs and CRLF": "Line one\r\nline two\vtab\there?\r\n",
    "pasted colours": "Why does pytest print this?\n" + "\x1b[31mFAILED\x1b[0m test_x\n" * 20,
    "window title codes": "My prompt shows \x1b]0;user@host: ~\x07 why?" * 3,
    "mojibake question": "I get ������ instead of 한글 when I read a cp949 file, why?",
    "newer emoji (unassigned here)": "Is 🫨 or 🩷 or 🪿 valid in an identifier?",
    "private use (icon fonts)": "My prompt shows \ue0b0 and \uf115 boxes, which font?",
    "C1-free latin-1": "Ça coûte 5 € — naïve façade, ½ × ¾?",
}


@pytest.mark.parametrize("name", sorted(TEXT))
def test_text_in_any_script_is_accepted(name: str) -> None:
    assert validate_question(TEXT[name]) == TEXT[name].strip()


@pytest.mark.parametrize("text", ["abc \ud800 def", "id\udcff", "\udfff"])
def test_lone_surrogates_are_not_unicode_text(text: str) -> None:
    with pytest.raises(InvalidQuestionError, match="not valid Unicode text"):
        validate_question(text)


def _random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06"

BINARY = {
    "NUL": "How do I\x00 sort?",
    "C0 controls": "How do I \x01\x02\x03 sort a list?",
    "C1 controls": "text " + "".join(chr(c) for c in range(0x80, 0xA0)),
    "PNG as latin-1": PNG_HEAD.decode("latin-1"),
    "PNG as UTF-8, NULs dropped": PNG_HEAD.replace(b"\x00", b"").decode("utf-8", "replace"),
    "only replacement characters": "\ufffd" * 40,
    **{
        f"random {size}B as {encoding}{nul}": _random_bytes(size, size)
        .replace(b"\x00", b"" if nul else b"\x00")
        .decode(encoding, "replace")
        for size in (64, 512, 4096)
        for encoding in ("utf-8", "latin-1")
        for nul in ("", ", NULs dropped")
    },
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_is_rejected(name: str) -> None:
    with pytest.raises(InvalidQuestionError, match="binary data"):
        validate_question(BINARY[name])


def test_a_few_stray_controls_in_a_long_paste_are_forgiven() -> None:
    paste = "Why does my log look like this?\n" + ("ok line\n" * 300) + "\x07\x08\x07 end"
    assert validate_question(paste) == paste.strip()


def test_invalid_utf8_bytes_and_non_text() -> None:
    with pytest.raises(InvalidQuestionError, match="not UTF-8"):
        validate_question(b"abc \xff def")
    with pytest.raises(InvalidQuestionError, match="must be text"):
        validate_question(42)
    assert validate_question("  정렬은?  ".encode()) == "정렬은?"


def test_length_limit_still_applies() -> None:
    with pytest.raises(InvalidQuestionError, match="limit is 8,000"):
        validate_question("x" * 8001)
