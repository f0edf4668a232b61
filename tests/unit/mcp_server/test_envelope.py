"""The words around a search reply's results: the index's age, what was cut, what to try."""

from __future__ import annotations

import pytest

from codeweaver.mcp_server.envelope import age_words, cut_line, index_line, zero_hit_suggestion
from codeweaver.mcp_server.search import Searched
from codeweaver.mcp_server.structured import IndexState, ResultsCut
from tests.fakes import doc


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0, "just now"), (59, "just now"), (60, "1 min ago"), (3_599, "59 min ago"),
     (3_600, "1 h ago"), (47 * 3_600, "47 h ago"), (2 * 86_400, "2 days ago"),
     (400 * 86_400, "400 days ago")],
)  # fmt: skip
def test_the_age_of_an_index_in_words(seconds: int, words: str) -> None:
    assert age_words(seconds) == words


def test_the_index_line_says_when_and_what() -> None:
    state = IndexState(
        source="python_docs",
        built_at="2026-11-20T08:00:05+00:00",
        age_seconds=90,
        holds="Python 3.11.2's docs, 10 sections",
    )
    assert index_line(state) == (
        "python_docs index built 2026-11-20 08:00:05 UTC (1 min ago): "
        "Python 3.11.2's docs, 10 sections"
    )


def test_a_cut_line_names_both_what_the_bar_and_the_limit_left_out() -> None:
    both = ResultsCut(
        source="installed_docs", below_min_score=1, best_below=0.1234, beyond_limit=3,
        more_unread=True,
    )  # fmt: skip
    assert cut_line(both, 5, 0.13) == (
        "installed_docs: 1 result below min_score 0.13 (the best 0.123) and 3+ more beyond "
        "limit 5 not shown; raise limit (up to 10) to see more"
    )
    unscored = ResultsCut(
        source="web", below_min_score=2, best_below=None, beyond_limit=0, more_unread=False
    )
    assert cut_line(unscored, 10, 0.5) == "web: 2 results below min_score 0.5 not shown"
    at_most = ResultsCut(
        source="npm_docs", below_min_score=0, best_below=None, beyond_limit=4, more_unread=False
    )
    assert cut_line(at_most, 10, None) == "npm_docs: 4 more beyond limit 10 not shown"


def test_a_suggestion_only_when_nothing_is_shown() -> None:
    assert zero_hit_suggestion(Searched(results=[doc(1)]), None) == ""
    cut = ResultsCut(
        source="installed_docs", below_min_score=3, best_below=None, beyond_limit=0,
        more_unread=False,
    )  # fmt: skip
    # Below the bar, yet without a score to tell: lower it or leave it out, no best named.
    assert zero_hit_suggestion(Searched(cuts=[cut]), 0.2) == (
        "nothing scored 0.2 or more: lower min_score, or leave it out for the whole ranked list"
    )
    assert zero_hit_suggestion(Searched(), 0.2).startswith("nothing found: try the API's name")
