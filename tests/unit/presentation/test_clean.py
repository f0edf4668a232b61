"""The one cleaning rule for untrusted text, shared by every door."""

from __future__ import annotations

import pytest

from codeweaver.presentation.clean import clean, one_line, safe_url


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[31mred\x1b[0m", "ared"),  # a colour (CSI), whole
        ("\x1b]0;HIJACK\x07title", "title"),  # a window title (OSC ended by BEL)
        ("\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", "link"),  # a hyperlink (OSC, ST)
        ("x\x9b2Jy", "xy"),  # the 8-bit CSI
        ("bell\x07 del\x7f nul\x00", "bell del nul"),
        ("\u202eevil\u202c", "evil"),  # right-to-left override: would show "live"
        ("a\u2066b\u2069\u200fc\u061c", "abc"),  # isolates and marks
        ("line\r\nnext\rlast\tx", "line\nnext\nlast\tx"),
        ("한국어 그대로", "한국어 그대로"),
        ("bad \udcff byte", "bad \ufffd byte"),
    ],
)
def test_clean_keeps_letters_and_drops_controls(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_one_line_collapses_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert one_line("  a\n\tb  c ") == "a b c"
    assert one_line("abcdefghij", 5) == "abcd…"
    assert one_line("abc", 5) == "abc"


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://docs.python.org/3/", "https://docs.python.org/3/"),
        (" HTTP://x.example/a ", "HTTP://x.example/a"),
        ("javascript:alert(1)", ""),
        ("data:text/html,<script>", ""),
        ("file:///etc/passwd", ""),
        ("https://x.example/\x1b[31mred", "https://x.example/red"),
    ],
)
def test_only_http_links_survive(url: str, kept: str) -> None:
    assert safe_url(url) == kept
