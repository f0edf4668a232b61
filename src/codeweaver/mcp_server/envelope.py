"""What a search reply says around its results: how fresh each index searched is, what
was left out, and what to try when nothing was found.

An agent cannot look at the server: without these lines it cannot tell "nothing matches"
from "a bar or the limit hid it", nor docs of today's installation from an index built
before the last upgrade. They are the server's own words, in the text (`index:` above the
results; `cut:` and `suggestion:` below them, after the `note:` lines) and in the
structured content (`index`, `cut`, `suggestion`).
"""

from __future__ import annotations

from collections.abc import Iterable

from codeweaver.mcp_server.arguments import MAX_LIMIT
from codeweaver.mcp_server.render import format_results
from codeweaver.mcp_server.search import Searched
from codeweaver.mcp_server.structured import IndexState, ResultsCut, SearchOutput, search_output

DAY = 86_400


def age_words(seconds: int) -> str:
    """`just now`, `12 min ago`, `5 h ago`, `3 days ago`."""
    if seconds < 60:
        return "just now"
    if seconds < 3_600:
        return f"{seconds // 60} min ago"
    if seconds < 2 * DAY:
        return f"{seconds // 3_600} h ago"
    return f"{seconds // DAY} days ago"


def index_line(state: IndexState) -> str:
    """`installed_docs index built 2026-11-26 09:14:03 UTC (3 days ago): <what it holds>`."""
    built = state.built_at.replace("T", " ").removesuffix("+00:00")
    return f"{state.source} index built {built} UTC ({age_words(state.age_seconds)}): {state.holds}"


def cut_line(cut: ResultsCut, limit: int, min_score: float | None) -> str:
    """`installed_docs: 12 results below min_score 0.13 (the best 0.121) and 3 more beyond
    limit 5 not shown; raise limit (up to 10) to see more`."""
    parts: list[str] = []
    if cut.below_min_score:
        best = f" (the best {cut.best_below:.3f})" if cut.best_below is not None else ""
        bar = f"{min_score:g}" if min_score is not None else "?"
        parts.append(f"{_results(cut.below_min_score)} below min_score {bar}{best}")
    if cut.beyond_limit:
        more = "+" if cut.more_unread else ""
        parts.append(f"{cut.beyond_limit}{more} more beyond limit {limit}")
    line = f"{cut.source}: {' and '.join(parts)} not shown"
    if cut.beyond_limit and limit < MAX_LIMIT:
        line += f"; raise limit (up to {MAX_LIMIT}) to see more"
    return line


def zero_hit_suggestion(found: Searched, min_score: float | None) -> str:
    """What to try when nothing is shown ("" when something is)."""
    if found.results:
        return ""
    scores = [c.best_below for c in found.cuts if c.below_min_score and c.best_below is not None]
    if min_score is not None and any(c.below_min_score for c in found.cuts):
        best = f" (the best scored {max(scores):.3f})" if scores else ""
        return (
            f"nothing scored {min_score:g} or more{best}: lower min_score, or leave it out "
            "for the whole ranked list"
        )
    return (
        "nothing found: try the API's name (e.g. `json.loads`), a shorter query with only "
        "its key words, or `ask` for an answer from every source"
    )


def search_reply(
    found: Searched, notes: Iterable[str], limit: int, min_score: float | None
) -> tuple[str, SearchOutput]:
    """The reply's Markdown and its structured content."""
    notes = list(notes)
    suggestion = zero_hit_suggestion(found, min_score)
    header = [f"index: {index_line(state)}" for state in found.indexes]
    footer = [f"cut: {cut_line(cut, limit, min_score)}" for cut in found.cuts]
    if suggestion:
        footer.append(f"suggestion: {suggestion}")
    text = format_results(found.results, [*found.notes(), *notes], header=header, footer=footer)
    output = search_output(
        found.results,
        found.problems,
        notes,
        min_score=min_score,
        index=found.indexes,
        cut=found.cuts,
        suggestion=suggestion,
    )
    return text, output


def _results(n: int) -> str:
    return f"{n} result" if n == 1 else f"{n} results"
