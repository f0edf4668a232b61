"""Text from outside (titles, paths, answers) made safe to print on a terminal.

A knowledge-base file, a web page or a model can carry escape sequences that set the
window title, clear the screen or recolour what follows, and bidirectional controls that
make text read differently from what it is. Printed text keeps its letters, newlines and
tabs; the rest is dropped, by the rule every door shares (`presentation.clean`).
"""

from __future__ import annotations

from codeweaver.presentation.clean import clean, one_line


def terminal_safe(text: str, *, single_line: bool = False) -> str:
    """`text` with escape sequences, control characters and bidirectional controls
    removed; `single_line` also turns newlines and tabs into spaces (titles, cells)."""
    return one_line(text) if single_line else clean(text)
