"""Text from outside (titles, paths, answers) made safe to print on a terminal.

A knowledge-base file, a web page or a model can carry escape sequences that set the
window title, clear the screen or recolour what follows. Printed text keeps its letters,
newlines and tabs; escape sequences and other control characters are dropped.
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
# Remaining C0 controls except tab and newline, DEL, and C1 controls.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def terminal_safe(text: str, *, single_line: bool = False) -> str:
    """`text` with escape sequences and control characters removed.

    `single_line` also turns newlines and tabs into spaces (for titles and table cells).
    Lone surrogates (from undecodable bytes) become U+FFFD so printing cannot fail.
    """
    cleaned = _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))
    if single_line:
        cleaned = " ".join(cleaned.split())
    return _SURROGATES.sub("\ufffd", cleaned)
