"""The Gradio app's pieces in process: sources and citations as safe Markdown, history and
session labels, and a clear error without Gradio (the app mounted on the real service and
driven over loopback by `gradio_client`: `tests/e2e/ui/test_gradio_client.py`)."""

from __future__ import annotations

import re
import sys
from datetime import UTC
from typing import Any

import pytest
from fastapi import FastAPI

from codeweaver.memory.sessions import SessionInfo
from codeweaver.ui.chat_markdown import (
    escape_markdown,
    history_messages,
    link_citations,
    session_label,
    sources_markdown,
    time_zone,
    views_of,
)
from codeweaver.ui.gradio_app import MISSING, mount_gradio


def test_missing_gradio_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gradio", None)
    with pytest.raises(RuntimeError) as raised:
        mount_gradio(FastAPI())
    assert str(raised.value) == MISSING
    assert "pip install 'codeweaver[gradio]'" in MISSING


def test_titles_and_links_are_escaped() -> None:
    assert escape_markdown("a_b *c*\n<b>") == "a\\_b \\*c\\* \\<b\\>"
    views = views_of(
        [
            {"n": 1, "title": "ok", "url": "https://x.example/a b)c", "source": "web"},
            {"n": 2, "title": "[t](javascript:x)", "url": "javascript:x", "source": ""},
        ]
    )
    listed = sources_markdown(views)
    assert "[1] [ok](https://x.example/a%20b%29c) — web" in listed
    assert "[2] \\[t\\](javascript:x)" in listed
    assert not re.search(r"(?<!\\)\]\(javascript", listed)


IO_PAGE = "https://docs.example/io"


SOURCES: list[dict[str, Any]] = [
    {"n": 1, "title": "io", "url": IO_PAGE + "#a", "label": "docs", "reference": "io#a"},
    {"n": 2, "title": "IO", "url": IO_PAGE + "#b", "label": "docs", "reference": "io#b"},
    {"n": 3, "title": "io", "url": IO_PAGE + "#c", "reference": "io#c", "cited": False},
    {"n": 4, "title": 'say "hi"', "url": "", "label": "notes"},
]


def test_citations_link_to_their_entries_which_tell_twins_apart() -> None:
    views = views_of(SOURCES)
    linked = link_citations("Loop [1][4], not `a[2]`, a[2], [3], [9] or [1](x). 끝[1]", views, 7)
    assert linked == (
        'Loop [[1]](#cw-7-source-1 "io")[[4]](#cw-7-source-4 "say \'hi\'"), '
        'not `a[2]`, a[2], [3], [9] or [1](x). 끝[[1]](#cw-7-source-1 "io")'
    )
    # Only cited sources are listed with an anchor; titles that repeat (in any case) show
    # their reference; the uncited one is named on the last line.
    assert sources_markdown(views, "en", 7).split("\n") == [
        "**Sources**",
        "",
        f'- <span id="cw-7-source-1"></span>[1] [io]({IO_PAGE}#a) — docs (io#a)',
        f'- <span id="cw-7-source-2"></span>[2] [IO]({IO_PAGE}#b) — docs (io#b)',
        '- <span id="cw-7-source-4"></span>[4] say "hi" — notes',
        "- Also retrieved, not cited: [3] io",
    ]
    assert sources_markdown([], "en", 7) == ""


def test_history_names_the_turn_of_each_answer() -> None:
    messages = [
        {"role": "user", "content": "first <b>", "turn": 1},
        {"role": "assistant", "content": "A [1].", "sources": SOURCES[:1], "turn": 1},
        {"role": "user", "content": "second", "turn": 2},
        {"role": "assistant", "content": "B [1].", "sources": SOURCES[:1], "turn": 2},
    ]
    chat, turns = history_messages(messages)
    assert [m["content"].split("\n")[0] for m in chat] == [
        "first &lt;b>",
        'A [[1]](#cw-1-source-1 "io").',
        "second",
        'B [[1]](#cw-2-source-1 "io").',
    ]
    assert turns == {1: 1, 3: 2}  # a thumb on chat message 3 rates turn 2


def test_session_labels_show_the_question_and_its_last_time() -> None:
    def info(title: str) -> SessionInfo:
        return SessionInfo("s", title, 2, created=0.0, updated=1_700_000_000.0)

    pasted = info("How do I read a file? ```python open(x).read() ```")
    assert session_label(pasted) == "How do I read a file? · 2023-11-14 22:13"
    assert (
        session_label(pasted, time_zone("Asia/Seoul")) == "How do I read a file? · 2023-11-15 07:13"
    )
    assert session_label(info("```python\nx = 1\n```")) == "x = 1 · 2023-11-14 22:13"
    long = session_label(info("word " * 40))
    assert long.startswith("word word") and long.endswith("… · 2023-11-14 22:13")
    assert len(long.split(" · ")[0]) == 70
    assert session_label(info("")) == "(untitled) · 2023-11-14 22:13"
    for bad in ("", "Not/AZone", "../../etc/passwd", None):
        assert time_zone(bad) is UTC
