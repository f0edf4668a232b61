"""D14: citation links are made on the Markdown token stream, never inside markup."""

from __future__ import annotations

import re

from codeweaver.api.render import render_answer

CITE = (
    '<a class="cite" href="#source-{n}" data-n="{n}" rel="noopener noreferrer nofollow">[{n}]</a>'
)


def _cites(html: str) -> list[str]:
    return re.findall(r'<a class="cite"[^>]*data-n="(\d+)"', html)


def test_marker_in_a_link_title_stays_in_the_attribute() -> None:
    html = render_answer('[x](http://a.example "see [1] here")', 1)
    assert html == (
        '<p><a href="http://a.example" title="see [1] here" '
        'rel="noopener noreferrer nofollow">x</a></p>\n'
    )
    assert _cites(html) == []


def test_marker_in_an_image_alt_text_is_not_linked() -> None:
    html = render_answer("![pic [1]](http://a.example/i.png)", 1)
    assert _cites(html) == []
    assert html == "<p></p>\n"  # images are not in the allow-list; no markup leaks out


def test_marker_in_link_text_or_code_is_not_linked() -> None:
    html = render_answer("[see [1]](http://b.example), `x[1]` and\n\n```\na[1]\n```\n", 2)
    assert _cites(html) == []
    assert '<a href="http://b.example" rel="noopener noreferrer nofollow">see [1]</a>' in html
    assert "<code>x[1]</code>" in html and "<pre><code>a[1]\n</code></pre>" in html


def test_autolink_keeps_its_brackets() -> None:
    html = render_answer("<http://x.example/[1]> [1]", 1)
    assert _cites(html) == ["1"]
    assert ">http://x.example/[1]</a>" in html


def test_ordinary_citations_are_linked() -> None:
    html = render_answer("Use `sorted()` [1], or *sort in place* [2][3]. Not [4] or [0].", 3)
    assert _cites(html) == ["1", "2", "3"]
    assert CITE.format(n=1) in html
    assert "Not [4] or [0]." in html


def test_citations_in_lists_headings_tables_and_emphasis() -> None:
    markdown = "# Title [1]\n\n- item [2]\n\n| a | b |\n|---|---|\n| [1] | **[2]** |\n"
    html = render_answer(markdown, 2)
    assert _cites(html) == ["1", "2", "1", "2"]
    assert "<h1>Title " + CITE.format(n=1) + "</h1>" in html


def test_no_sources_no_links_and_markup_still_escaped() -> None:
    html = render_answer("<script>alert(1)</script> [1]", 0)
    assert _cites(html) == [] and "<script>" not in html and "[1]" in html
