"""`codeweaver doctor` prints source states and paths as inert text."""

from __future__ import annotations

import io

from rich.console import Console

from codeweaver.cli.doctor import render_report

HOSTILE = "kb \x1b]0;HIJACK\x07\x1b[2J\x1b[31mred [bold]x[/]"


def test_states_and_paths_carry_no_escape_or_markup() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    report = {
        "model": {"model": "scripted:echo", "status": HOSTILE},
        "sources": {"knowledge_base": HOSTILE},
        "stores": {"knowledge_base": "/data/" + HOSTILE},
        "keys": {},
    }
    render_report(console, report)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "HIJACK" not in text  # the title-setting sequence is dropped whole
    assert "[bold]x[/]" in text  # markup-looking text is shown as written
