"""One rule for untrusted text: what a title, a path or a model's words may carry.

A knowledge-base file, a web page or a model can carry escape sequences (that set a
terminal's title, clear its screen or recolour what follows), other control characters,
and bidirectional controls that make text read differently from what it is ("evil"
shown as "live"). Shown text keeps its letters, newlines and tabs; the rest is dropped.
Markup is the door's business: each escapes it where it is not rendered safely.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: CSI (`ESC [ … final`), OSC/DCS/SOS/PM/APC strings ended by
# BEL or ST, and two-byte escapes; then the 8-bit C1 forms of CSI and OSC.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?"
)
# Remaining C0 controls except tab and newline, DEL, C1 controls, and the Unicode
# bidirectional marks, embeddings, overrides and isolates.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_URL = re.compile(r"^https?://", re.IGNORECASE)


def clean(text: object) -> str:
    """`text` without escape sequences, control characters or bidirectional controls.

    Newlines and tabs stay; lone surrogates (from undecodable bytes) become U+FFFD so
    printing or encoding cannot fail.
    """
    raw = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _SURROGATES.sub("\ufffd", _CONTROLS.sub("", _ESCAPES.sub("", raw)))


def one_line(text: object, limit: int = 0) -> str:
    """A field on one line: cleaned, whitespace collapsed, cut to `limit` characters
    (0: no limit) with an ellipsis."""
    flat = " ".join(clean(text).split())
    if limit and len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def safe_url(url: object) -> str:
    """The URL, cleaned, if it is http(s), else empty: a link must never run script."""
    text = one_line(url)
    return text if _URL.match(text) else ""
