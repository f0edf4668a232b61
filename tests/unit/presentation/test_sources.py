"""Numbered sources: cited ones first, the others collapsed, every field inert."""

from __future__ import annotations

from codeweaver.agent.answering.citations import cited_first
from codeweaver.presentation.sources import (
    SourceView,
    answer_markdown,
    markdown_text,
    source_views,
    sources_markdown,
)
from codeweaver.vocabulary import SearchResult
from tests.fakes import doc


def test_cited_sources_come_first_and_markers_follow_them() -> None:
    sources = [doc(1), doc(2), doc(3), doc(4)]
    answer = "Use a loop [3]. Or read all [1][3].\n\n```python\nrows[2]\n```\n`x[4]`"
    renumbered, ordered, cited = cited_first(answer, sources)
    assert renumbered == "Use a loop [1]. Or read all [2][1].\n\n```python\nrows[2]\n```\n`x[4]`"
    assert [s["title"] for s in ordered] == ["doc 3", "doc 1", "doc 2", "doc 4"]
    assert cited == 2
    # Already in order: nothing changes, so doing it twice is doing it once.
    assert cited_first(renumbered, ordered) == (renumbered, ordered, 2)


def test_a_marker_naming_no_source_stays_as_written() -> None:
    renumbered, ordered, cited = cited_first("See [2] and [9].", [doc(1), doc(2)])
    assert renumbered == "See [1] and [9]." and cited == 1
    assert [s["title"] for s in ordered] == ["doc 2", "doc 1"]


def test_views_mark_what_is_cited_and_clean_every_field() -> None:
    hostile: SearchResult = {
        "title": "Read\x1b[31m \u202eevil\nfiles",
        "url": "javascript:alert(1)",
        "snippet": "",
        "source": "knowledge_base",
        "score": None,
        "attribution": "by\x07 me",
    }
    views = source_views("Use it [2].", [doc(1), hostile], "ko")
    assert [(v.n, v.cited) for v in views] == [(1, False), (2, True)]
    assert views[1].title == "Read evil files" and views[1].url == ""
    assert views[1].label == "지식 베이스" and views[1].attribution == "by me"
    assert SourceView.from_dict(views[1].to_dict()) == views[1]


def test_markdown_lists_cited_sources_and_collapses_the_rest() -> None:
    views = source_views("Use it [1].", [doc(1), doc(2), doc(3)])
    assert sources_markdown(views) == (
        "\n\n**Sources**\n\n"
        "- [1] [doc 1](https://docs.example/1) — installed docs\n"
        "- Also retrieved, not cited: [2] doc 2; [3] doc 3"
    )
    assert sources_markdown([]) == ""


def test_markdown_text_cannot_open_a_link_code_or_tag() -> None:
    assert markdown_text("a](javascript:x) `b` <img> *c*") == (
        "a\\](javascript:x) \\`b\\` \\<img\\> \\*c\\*"
    )


def test_answer_markdown_is_the_answer_then_its_sources() -> None:
    views = source_views("Yes [1].", [doc(1)], "ko")
    done = {"answer": "Yes [1].", "sources": [v.to_dict() for v in views], "language": "ko"}
    assert answer_markdown(done) == (
        "Yes [1].\n\n**출처**\n\n- [1] [doc 1](https://docs.example/1) — 설치된 문서"
    )
