"""What a message must be to be answered: text, not bytes; not empty; not huge; a known mode.

Every entry point (CLI, API, page, Gradio) checks input here before anything runs, so a
bad message gets the same clear reason everywhere.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal, get_args

MAX_QUESTION_CHARS = 8000
# How a message is answered: the fixed pipeline or the librarian loop.
Mode = Literal["pipeline", "librarian"]
MODES: tuple[str, ...] = get_args(Mode)


class InvalidQuestionError(ValueError):
    """The message cannot be answered as given; the text says why."""


class UnknownModeError(InvalidQuestionError):
    """No answering mode has this name."""


def validate_mode(mode: object) -> Mode:
    if mode not in MODES:
        raise UnknownModeError(f"unknown mode {mode!r}; the modes are: {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


# What text may hold that `isprintable` calls unprintable: whitespace controls, and the
# colour codes of pasted terminal output. Format characters (ZWJ, RLM, BOM…) and every
# space separator (NBSP, U+3000…) are letters' business and never counted.
_TEXT_CONTROLS = frozenset("\t\n\v\f\r")
_TERMINAL_CODES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|[()][0-9A-Za-z])"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _binary_reason(text: str) -> str | None:
    """Why `text` looks like bytes rather than writing, or None.

    Binary read as text (latin-1, or UTF-8 with errors="replace") shows C0/C1 control
    characters (about 1 in 9 random bytes; real text has none besides whitespace) and
    replacement characters U+FFFD or unassigned code points.
    `codeweaver_eval.bench.unicode_questions` measures it: none of 31,123 questions of the
    shared data sets is rejected, none of 2,578 samples of binary files (with or without
    their NULs) is accepted.
    """
    if "\x00" in text:
        return "a NUL character"
    controls = undecoded = 0
    for char in _TERMINAL_CODES.sub("", text):
        kind = unicodedata.category(char)
        if kind == "Cc" and char not in _TEXT_CONTROLS:
            controls += 1
        elif char == "\ufffd" or kind == "Cn":
            undecoded += 1
    # Controls decide: binary always has some (1.1% of the sparsest sample, a stripped ELF
    # header), text has none, so a few strays in a long paste are forgiven. Replacement
    # characters alone only when they are most of the text: a question about mojibake
    # ("I get ����") holds a few.
    size = max(len(text), 1)
    if (controls > 8 and controls / size >= 0.005) or (controls >= 3 and controls / size >= 0.015):
        return f"{controls} control characters"
    if (unreadable := controls + undecoded) >= 4 and unreadable / size >= 0.3:
        return f"{unreadable} control or undecodable characters"
    return None


def validate_question(text: object) -> str:
    """A clean question, or `InvalidQuestionError` for empty, huge, binary or invalid input."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidQuestionError("the question is not UTF-8 text") from None
    if not isinstance(text, str):
        raise InvalidQuestionError("the question must be text")
    # A lone surrogate (JSON "\ud800", or bytes decoded with surrogateescape) cannot be
    # encoded, so it would fail later in the cache, the model or the stream.
    if (surrogate := _SURROGATE.search(text)) is not None:
        raise InvalidQuestionError(
            "the question is not valid Unicode text (it holds the lone surrogate "
            f"U+{ord(surrogate.group()):04X}; send it as UTF-8)"
        )
    if (reason := _binary_reason(text)) is not None:
        raise InvalidQuestionError(f"the question contains binary data ({reason})")
    cleaned = text.strip()
    if not cleaned:
        raise InvalidQuestionError("the question is empty")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise InvalidQuestionError(
            f"the question is {len(cleaned):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,} (shorten it or put the material in the knowledge base)"
        )
    return cleaned
